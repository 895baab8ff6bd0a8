//! TokenRequest round trips against the real binary: a token requested for
//! a service account and bound to a pod (`serviceaccounts/NAME/token`,
//! signed RS256 with an `openssl genrsa` key, `tests/fixtures/
//! service-account-rsa.key`, given by `--service-account-signing-key-file`) is a bearer token for that service
//! account under `--authorization-mode RBAC` (a RoleBinding grants it
//! configmaps, not secrets), whose user `whoami` and TokenReview show with
//! kube's groups and extra; once the pod is deleted the token is refused
//! (401) and TokenReview says why. Also kube's refusals of bad requests,
//! SubjectAccessReview and LocalSubjectAccessReview about the service
//! account, and `kubectl create token` on a server with its generated key.

mod common;

use base64::Engine;
use common::{assert_status, Launch, Server};
use serde_json::{json, Value};
use std::io::Write;

const ISSUER: &str = "https://shardline.test";
const ADMIN: &str = "Bearer admin-token";

fn as_admin(s: &Server, method: &str, path: &str, body: Option<&Value>) -> common::http::Response {
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap());
    s.request(
        method,
        path,
        &[("Authorization", ADMIN), ("Content-Type", "application/json"), ("Accept", "application/json")],
        bytes.as_deref(),
    )
}

fn admin_created(s: &Server, path: &str, body: &Value) -> Value {
    let r = as_admin(s, "POST", path, Some(body));
    assert_eq!(r.status, 201, "POST {path}: {}", r.text());
    r.json()
}

fn with_token(s: &Server, token: &str, method: &str, path: &str, body: Option<&Value>) -> common::http::Response {
    let auth = format!("Bearer {token}");
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap());
    s.request(method, path, &[("Authorization", &auth), ("Content-Type", "application/json")], bytes.as_deref())
}

/// The JSON of a JWT part (0: header, 1: claims).
fn jwt_part(token: &str, index: usize) -> Value {
    let part = token.split('.').nth(index).expect("a JWT has three parts");
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
}

fn token_review(s: &Server, token: &str) -> Value {
    admin_created(
        s,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}),
    )["status"]
        .clone()
}

/// The test RSA key (a 2048-bit `openssl genrsa` key, PKCS#8 PEM).
fn rsa_key() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/service-account-rsa.key")
}

/// A server under RBAC with `admin-token` in system:masters and the RSA key
/// given by `key_flag` (`--service-account-signing-key-file`, or
/// `--service-account-key-file` for verification only). The TempDir holds
/// the token file.
fn rbac_server_with_key(key_flag: &str) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::File::create(&tokens).unwrap().write_all(b"admin-token,admin,uid-admin,system:masters\n").unwrap();
    let s = Server::start_with(Launch {
        extra_args: vec![
            "--token-auth-file".into(),
            tokens.display().to_string(),
            "--authorization-mode".into(),
            "RBAC".into(),
            key_flag.into(),
            rsa_key().display().to_string(),
            "--service-account-issuer".into(),
            ISSUER.into(),
        ],
        readyz_token: Some("admin-token".into()),
        ..Launch::default()
    });
    (s, dir)
}

#[test]
fn a_pod_bound_token_works_until_its_pod_is_deleted() {
    let (s, _dir) = rbac_server_with_key("--service-account-signing-key-file");

    admin_created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": "team"}}));
    let account = admin_created(&s, "/api/v1/namespaces/team/serviceaccounts", &json!({"metadata": {"name": "robot"}}));
    admin_created(&s, "/api/v1/namespaces/team/serviceaccounts", &json!({"metadata": {"name": "other"}}));
    let pod = admin_created(
        &s,
        "/api/v1/namespaces/team/pods",
        &json!({"metadata": {"name": "runner"},
            "spec": {"serviceAccountName": "robot", "containers": [{"name": "app", "image": "busybox"}]}}),
    );
    let pod_uid = pod["metadata"]["uid"].as_str().unwrap().to_string();
    admin_created(
        &s,
        "/api/v1/namespaces/team/configmaps",
        &json!({"metadata": {"name": "settings"}, "data": {"a": "1"}}),
    );
    admin_created(
        &s,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles",
        &json!({"metadata": {"name": "cm-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]}),
    );
    admin_created(
        &s,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
        &json!({"metadata": {"name": "robot-reads"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "team"}]}),
    );

    // The TokenRequest, bound to the pod.
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "runner", "uid": pod_uid}}});
    let answer = admin_created(&s, "/api/v1/namespaces/team/serviceaccounts/robot/token", &request);
    assert_eq!(answer["kind"], "TokenRequest");
    assert_eq!(answer["spec"]["expirationSeconds"], 3600);
    assert_eq!(answer["spec"]["audiences"], json!([ISSUER]), "the API audiences default to the issuer");
    assert!(answer["status"]["expirationTimestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
    let token = answer["status"]["token"].as_str().unwrap().to_string();
    assert_eq!(jwt_part(&token, 0)["alg"], "RS256");
    let claims = jwt_part(&token, 1);
    assert_eq!(claims["iss"], ISSUER);
    assert_eq!(claims["sub"], "system:serviceaccount:team:robot");
    assert_eq!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(), 3600);
    assert_eq!(claims["kubernetes.io"]["namespace"], "team");
    assert_eq!(claims["kubernetes.io"]["serviceaccount"]["uid"], account["metadata"]["uid"]);
    assert_eq!(claims["kubernetes.io"]["pod"], json!({"name": "runner", "uid": pod_uid}));

    // The token is the service account: RBAC grants configmaps, not secrets.
    let list = with_token(&s, &token, "GET", "/api/v1/namespaces/team/configmaps", None);
    assert_eq!(list.status, 200, "{}", list.text());
    assert_eq!(list.json()["items"][0]["metadata"]["name"], "settings");
    let secrets = with_token(&s, &token, "GET", "/api/v1/namespaces/team/secrets", None);
    assert_eq!(
        assert_status(&secrets, 403, "Forbidden")["message"],
        "secrets is forbidden: User \"system:serviceaccount:team:robot\" cannot list resource \"secrets\" in API group \"\" in the namespace \"team\""
    );
    let whoami = with_token(
        &s,
        &token,
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        Some(&json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})),
    );
    assert_eq!(whoami.status, 201, "{}", whoami.text());
    let info = &whoami.json()["status"]["userInfo"];
    assert_eq!(info["username"], "system:serviceaccount:team:robot");
    assert_eq!(info["uid"], account["metadata"]["uid"]);
    assert_eq!(
        info["groups"],
        json!(["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"])
    );
    assert_eq!(info["extra"]["authentication.kubernetes.io/pod-name"], json!(["runner"]));
    assert_eq!(info["extra"]["authentication.kubernetes.io/pod-uid"], json!([pod_uid]));
    // kube's bootstrap policy lets service accounts read the issuer's keys.
    let jwks = with_token(&s, &token, "GET", "/openid/v1/jwks", None);
    assert_eq!(jwks.status, 200, "{}", jwks.text());
    assert_eq!(jwks.json()["keys"][0]["kty"], "RSA");
    let review = token_review(&s, &token);
    assert_eq!(review["authenticated"], true, "{review}");
    assert_eq!(review["user"]["username"], "system:serviceaccount:team:robot");
    assert_eq!(review["audiences"], json!([ISSUER]));

    // Whether the service account may: SubjectAccessReview and the local one.
    let sar = |allowed_resource: &str| {
        admin_created(
            &s,
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": "system:serviceaccount:team:robot", "groups": ["system:serviceaccounts"],
                    "resourceAttributes": {"namespace": "team", "verb": "list", "resource": allowed_resource}}}),
        )["status"]["allowed"]
            .clone()
    };
    assert_eq!(sar("configmaps"), true);
    assert_eq!(sar("secrets"), false);
    let local = admin_created(
        &s,
        "/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews",
        &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
            "spec": {"user": "system:serviceaccount:team:robot", "resourceAttributes": {"verb": "get", "resource": "configmaps"}}}),
    );
    assert_eq!(local["status"]["allowed"], true);
    assert_eq!(local["spec"]["resourceAttributes"]["namespace"], "team");
    let nobody = as_admin(
        &s,
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        Some(&json!({"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}})),
    );
    assert_status(&nobody, 422, "Invalid");

    // Kube's refusals of bad token requests.
    let path = "/api/v1/namespaces/team/serviceaccounts/robot/token";
    let short = as_admin(&s, "POST", path, Some(&json!({"spec": {"expirationSeconds": 60}})));
    let status = assert_status(&short, 422, "Invalid");
    assert_eq!(status["details"]["causes"][0]["field"], "spec.expirationSeconds");
    assert!(status["message"].as_str().unwrap().contains("may not specify a duration less than 10 minutes"));
    let ghost = as_admin(&s, "POST", "/api/v1/namespaces/team/serviceaccounts/ghost/token", Some(&json!({})));
    assert_eq!(assert_status(&ghost, 404, "NotFound")["message"], "serviceaccounts \"ghost\" not found");
    let wrong_account = as_admin(
        &s,
        "POST",
        "/api/v1/namespaces/team/serviceaccounts/other/token",
        Some(&json!({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "runner"}}})),
    );
    assert_eq!(
        assert_status(&wrong_account, 400, "BadRequest")["message"],
        "cannot bind token for serviceaccount \"other\" to pod running with serviceaccount \"robot\""
    );
    let stale_uid = as_admin(
        &s,
        "POST",
        path,
        Some(
            &json!({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "runner", "uid": "nope"}}}),
        ),
    );
    assert_status(&stale_uid, 409, "Conflict");
    let config_map = as_admin(
        &s,
        "POST",
        path,
        Some(&json!({"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings"}}})),
    );
    assert_eq!(
        assert_status(&config_map, 400, "BadRequest")["message"],
        "cannot bind token to object of type /v1, Kind=ConfigMap"
    );
    // A forged token (the signature of another) is refused.
    let mut forged: Vec<&str> = token.split('.').collect();
    let other = admin_created(&s, path, &json!({"spec": {"expirationSeconds": 7200}}));
    let other_token = other["status"]["token"].as_str().unwrap().to_string();
    forged[2] = other_token.split('.').nth(2).unwrap();
    let forged = forged.join(".");
    assert_status(&with_token(&s, &forged, "GET", "/api/v1/namespaces/team/configmaps", None), 401, "Unauthorized");

    // The pod goes: its token is refused, the unbound one still works.
    let deleted = as_admin(&s, "DELETE", "/api/v1/namespaces/team/pods/runner?gracePeriodSeconds=0", None);
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    let refused = with_token(&s, &token, "GET", "/api/v1/namespaces/team/configmaps", None);
    assert_status(&refused, 401, "Unauthorized");
    let review = token_review(&s, &token);
    assert_eq!(review["authenticated"], Value::Null, "{review}");
    assert!(review["error"].as_str().unwrap().contains("service account token has been invalidated"), "{review}");
    assert_eq!(with_token(&s, &other_token, "GET", "/api/v1/namespaces/team/configmaps", None).status, 200);
    // The service account goes: every token of it is refused.
    assert_eq!(as_admin(&s, "DELETE", "/api/v1/namespaces/team/serviceaccounts/robot", None).status, 200);
    assert_status(
        &with_token(&s, &other_token, "GET", "/api/v1/namespaces/team/configmaps", None),
        401,
        "Unauthorized",
    );
}

#[test]
fn kubectl_create_token_makes_a_token_of_the_generated_key() {
    let s = Server::start();
    s.kubectl_ok(&["create", "namespace", "team"]);
    s.kubectl_ok(&["create", "serviceaccount", "robot", "-n", "team"]);
    let out = s.kubectl_ok(&["create", "token", "robot", "-n", "team", "--duration", "20m", "--audience", "vault"]);
    let token = out.stdout.trim().to_string();
    assert_eq!(jwt_part(&token, 0)["alg"], "ES256", "a server without a key file signs with its generated P-256 key");
    let claims = jwt_part(&token, 1);
    assert_eq!(claims["aud"], "vault");
    assert_eq!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(), 1200);
    assert_eq!(claims["iss"], "https://kubernetes.default.svc.cluster.local");
    // Reviewed for its own audience it is good; for the API's it is not.
    let review = |audiences: Value| {
        let r = s.post_json(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                "spec": {"token": token, "audiences": audiences}}),
        );
        assert_eq!(r.status, 201, "{}", r.text());
        r.json()["status"].clone()
    };
    let good = review(json!(["vault"]));
    assert_eq!((good["authenticated"].clone(), good["audiences"].clone()), (json!(true), json!(["vault"])));
    assert_eq!(good["user"]["username"], "system:serviceaccount:team:robot");
    assert_eq!(review(json!([]))["authenticated"], Value::Null);
    // kubectl refuses a too short duration itself? No: the server does (422).
    let short = s.kubectl(&["create", "token", "robot", "-n", "team", "--duration", "1m"]);
    assert!(!short.status.success());
    assert!(short.stderr.contains("may not specify a duration less than 10 minutes"), "{}", short.stderr);
}

/// A TokenRequest in Protobuf (client-go's typed clients, the kubelet),
/// built with k8s-pb: audiences, lifetime and a Secret binding are read.
#[test]
fn protobuf_token_requests() {
    use k8s_pb::api::authentication::v1 as authn;
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message;
    let s = Server::start();
    let created = |path: &str, body: &Value| {
        let r = s.post_json(path, body);
        assert_eq!(r.status, 201, "{}", r.text());
        r.json()
    };
    created("/api/v1/namespaces", &json!({"metadata": {"name": "team"}}));
    created("/api/v1/namespaces/team/serviceaccounts", &json!({"metadata": {"name": "robot"}}));
    let secret = created("/api/v1/namespaces/team/secrets", &json!({"metadata": {"name": "holder"}}));
    let request = authn::TokenRequest {
        metadata: None,
        spec: Some(authn::TokenRequestSpec {
            audiences: vec!["vault".into()],
            expiration_seconds: Some(900),
            bound_object_ref: Some(authn::BoundObjectReference {
                kind: Some("Secret".into()),
                api_version: Some("v1".into()),
                name: Some("holder".into()),
                u_id: None,
            }),
        }),
        status: None,
    };
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some("authentication.k8s.io/v1".into()),
            kind: Some("TokenRequest".into()),
        }),
        raw: Some(request.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = b"k8s\0".to_vec();
    body.extend(unknown.encode_to_vec());
    let r = s.request(
        "POST",
        "/api/v1/namespaces/team/serviceaccounts/robot/token",
        &[("Content-Type", "application/vnd.kubernetes.protobuf"), ("Accept", "application/json")],
        Some(&body),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let token = r.json()["status"]["token"].as_str().unwrap().to_string();
    let claims = jwt_part(&token, 1);
    assert_eq!(claims["aud"], "vault");
    assert_eq!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(), 900);
    assert_eq!(claims["kubernetes.io"]["secret"], json!({"name": "holder", "uid": secret["metadata"]["uid"]}));
    // The secret goes: the token is invalidated.
    assert_eq!(s.delete("/api/v1/namespaces/team/secrets/holder").status, 200);
    let r = s.post_json(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &json!({"spec": {"token": token, "audiences": ["vault"]}}),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    assert!(r.json()["status"]["error"].as_str().unwrap().contains("invalidated"), "{}", r.text());
}

/// The issuer's discovery documents: its OIDC configuration and its keys,
/// with which a token it issued verifies (the `kid` names the key).
#[test]
fn issuer_discovery_documents() {
    let s = Server::start();
    let config = s.get_ok("/.well-known/openid-configuration");
    assert_eq!(config["issuer"], "https://kubernetes.default.svc.cluster.local");
    assert_eq!(config["jwks_uri"], "https://kubernetes.default.svc.cluster.local/openid/v1/jwks");
    assert_eq!(config["id_token_signing_alg_values_supported"], json!(["ES256"]));
    let keys = s.get("/openid/v1/jwks");
    assert_eq!(keys.status, 200);
    assert_eq!(keys.header("content-type"), Some("application/jwk-set+json"));
    let keys = keys.json();
    assert_eq!(keys["keys"].as_array().unwrap().len(), 1);
    let s_created = |path: &str, body: &Value| {
        let r = s.post_json(path, body);
        assert_eq!(r.status, 201, "{}", r.text());
        r.json()
    };
    s_created("/api/v1/namespaces", &json!({"metadata": {"name": "team"}}));
    s_created("/api/v1/namespaces/team/serviceaccounts", &json!({"metadata": {"name": "robot"}}));
    let token = s_created("/api/v1/namespaces/team/serviceaccounts/robot/token", &json!({}))["status"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(jwt_part(&token, 0)["kid"], keys["keys"][0]["kid"]);
    assert_eq!(keys["keys"][0]["crv"], "P-256");
}

#[test]
fn legacy_secret_tokens_work_while_their_secret_and_account_stand() {
    use shardline::auth::serviceaccount::{LegacyClaims, ServiceAccountTokens, LEGACY_ISSUER};
    // The cluster's key, as a read tier is given it: verification only.
    let (s, _dir) = rbac_server_with_key("--service-account-key-file");
    let key = rsa_key();
    admin_created(&s, "/api/v1/namespaces", &json!({"metadata": {"name": "team"}}));
    let account = admin_created(&s, "/api/v1/namespaces/team/serviceaccounts", &json!({"metadata": {"name": "robot"}}));
    admin_created(
        &s,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings",
        &json!({"metadata": {"name": "robot-views"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "team"}]}),
    );
    // The token kube-controller-manager's tokens controller would have made, signed with the cluster's key.
    let signer = ServiceAccountTokens::from_pem(&std::fs::read(&key).unwrap(), &[], ISSUER.into(), vec![]).unwrap();
    let uid = account["metadata"]["uid"].as_str().unwrap().to_string();
    let claims = LegacyClaims {
        iss: LEGACY_ISSUER.into(),
        sub: "system:serviceaccount:team:robot".into(),
        namespace: "team".into(),
        secret_name: "robot-token".into(),
        service_account_name: "robot".into(),
        service_account_uid: uid.clone(),
    };
    let token = signer.sign_legacy(&claims).unwrap();
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    let secret = |data_token: &str, labels: Value| {
        json!({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": "robot-token", "labels": labels,
                         "annotations": {"kubernetes.io/service-account.name": "robot",
                                         "kubernetes.io/service-account.uid": uid}},
            "data": {"token": b64(data_token)}})
    };
    // Without its Secret the token is refused.
    assert_eq!(with_token(&s, &token, "GET", "/api/v1/namespaces/team/configmaps", None).status, 401);
    assert_eq!(token_review(&s, &token)["error"], "[invalid bearer token, Token has been invalidated]");
    admin_created(&s, "/api/v1/namespaces/team/secrets", &secret(&token, json!({})));
    let r = with_token(&s, &token, "GET", "/api/v1/namespaces/team/configmaps", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(with_token(&s, &token, "GET", "/api/v1/namespaces/team/secrets", None).status, 403);
    let review = token_review(&s, &token);
    assert_eq!(review["authenticated"], true, "{review}");
    assert_eq!(review["user"]["username"], "system:serviceaccount:team:robot");
    assert_eq!(review["user"]["uid"], uid.as_str());
    assert_eq!(
        review["user"]["groups"],
        json!(["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"])
    );
    assert_eq!(review["audiences"], json!([ISSUER]));
    // Its use is recorded on the Secret, as kube-apiserver records it: today's UTC date.
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let labels = || {
        as_admin(&s, "GET", "/api/v1/namespaces/team/secrets/robot-token", None).json()["metadata"]["labels"].clone()
    };
    assert_eq!(labels(), json!({"kubernetes.io/legacy-token-last-used": today}));

    // The Secret holding another token, or marked invalid by the cleaner: refused.
    let put = |body: &Value| {
        let current = as_admin(&s, "GET", "/api/v1/namespaces/team/secrets/robot-token", None).json();
        let mut body = body.clone();
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        let r = as_admin(&s, "PUT", "/api/v1/namespaces/team/secrets/robot-token", Some(&body));
        assert_eq!(r.status, 200, "{}", r.text());
    };
    put(&secret("another", json!({})));
    assert_eq!(with_token(&s, &token, "GET", "/api/v1/namespaces/team/configmaps", None).status, 401);
    assert_eq!(token_review(&s, &token)["error"], "[invalid bearer token, Token does not match server's copy]");
    put(&secret(&token, json!({"kubernetes.io/legacy-token-invalid-since": "2026-11-01"})));
    assert_eq!(
        token_review(&s, &token)["error"],
        "[invalid bearer token, the token in secret team/robot-token for service account team/robot has been \
         marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove \
         the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token]"
    );
    // Even a refused use is recorded.
    assert_eq!(labels()["kubernetes.io/legacy-token-last-used"], today.as_str());
    put(&secret(&token, json!({})));
    assert_eq!(token_review(&s, &token)["authenticated"], true);

    // The account deleted and made again has another uid: refused.
    assert_eq!(as_admin(&s, "DELETE", "/api/v1/namespaces/team/serviceaccounts/robot", None).status, 200);
    let again = admin_created(&s, "/api/v1/namespaces/team/serviceaccounts", &json!({"metadata": {"name": "robot"}}));
    assert_eq!(with_token(&s, &token, "GET", "/api/v1/namespaces/team/configmaps", None).status, 401);
    assert_eq!(
        token_review(&s, &token)["error"],
        format!(
            "[invalid bearer token, ServiceAccount UID ({}) does not match claim ({uid})]",
            again["metadata"]["uid"].as_str().unwrap()
        )
    );
    // A token signed by another key is not the cluster's.
    let stranger = ServiceAccountTokens::generated(ISSUER.into(), vec![]).unwrap();
    let forged = stranger.sign_legacy(&claims).unwrap();
    assert_eq!(with_token(&s, &forged, "GET", "/api/v1/namespaces/team/configmaps", None).status, 401);
}

//! The image pull policy kube defaults from an image reference: `Always`
//! for the `latest` tag (which an image without tag or digest implies),
//! `IfNotPresent` otherwise, including a reference that does not parse.
//!
//! Facts: pkg/apis/core/v1/defaults.go (SetDefaults_Container, and
//! SetDefaults_Volume for image volumes) call pkg/util/parsers.ParseImageName,
//! which parses with the docker reference grammar
//! (github.com/distribution/reference: ParseNormalizedNamed) and returns the
//! tag `latest` when the reference has neither tag nor digest; an error gives
//! an empty tag.

/// `Always` or `IfNotPresent` for `image`.
pub fn pull_policy(image: &str) -> &'static str {
    if tag(image).as_deref() == Some("latest") {
        "Always"
    } else {
        "IfNotPresent"
    }
}

/// The tag ParseImageName returns: `None` when the reference does not parse.
fn tag(image: &str) -> Option<String> {
    let (name_and_tag, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        let (algorithm, hex) = digest.split_once(':')?;
        if algorithm.is_empty() || hex.is_empty() {
            return None;
        }
    }
    let last_slash = name_and_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_and_tag[last_slash..].rfind(':') {
        Some(i) => (&name_and_tag[..last_slash + i], Some(&name_and_tag[last_slash + i + 1..])),
        None => (name_and_tag, None),
    };
    if !valid_name(name) {
        return None;
    }
    match tag {
        Some(tag) if !valid_tag(tag) => None,
        Some(tag) => Some(tag.to_string()),
        None if digest.is_some() => Some(String::new()),
        None => Some("latest".into()),
    }
}

/// distribution/reference: tag := [\w][\w.-]{0,127}
fn valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128 && chars.next().is_some_and(word) && chars.all(|c| word(c) || c == '.' || c == '-')
}

/// A repository name: an optional domain (a first component with `.` or
/// `:`, `localhost`, or capitals), then lowercase path components.
fn valid_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 255 {
        return false;
    }
    let mut components: Vec<&str> = name.split('/').collect();
    if components.len() > 1 {
        let first = components.first().copied().unwrap_or("");
        let is_domain = first.contains(['.', ':']) || first == "localhost" || first.to_lowercase() != first;
        if is_domain {
            if !valid_domain(first) {
                return false;
            }
            components.remove(0);
        }
    }
    components.iter().all(|c| valid_path_component(c))
}

fn valid_domain(domain: &str) -> bool {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || domain.starts_with('[') => (host, Some(port)),
        _ => (domain, None),
    };
    let host_ok =
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']'));
    host_ok && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// distribution/reference: [a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*
fn valid_path_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.first().is_none_or(|b| !alnum(*b)) || bytes.last().is_none_or(|b| !alnum(*b)) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(0);
        if alnum(b) {
            i += 1;
            continue;
        }
        // A separator run: ".", "_", "__" or one or more "-".
        let start = i;
        while bytes.get(i).is_some_and(|b| !alnum(*b)) {
            i += 1;
        }
        let separator = &component[start..i];
        let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    // pkg/apis/core/v1/defaults.go: SetDefaults_Container, through
    // pkg/util/parsers.ParseImageName (tag "latest" when none and no digest).
    #[test]
    fn pull_policy_by_tag() {
        let cases = [
            ("busybox", "Always"),
            ("busybox:latest", "Always"),
            ("registry.example/web:1.2.3", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v1", "IfNotPresent"),
            ("postgres:16", "IfNotPresent"),
            ("nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "IfNotPresent"),
            ("nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "Always"),
            // Does not parse: empty tag, hence IfNotPresent.
            ("", "IfNotPresent"),
            ("Busybox", "IfNotPresent"),
            ("busybox:", "IfNotPresent"),
            ("a//b", "IfNotPresent"),
            ("My.Registry:5000/app", "Always"),
        ];
        for (image, want) in cases {
            assert_eq!(pull_policy(image), want, "{image}");
        }
    }
}

//! `--runtime-config`: which API group/versions and resources the server
//! serves, in kube-apiserver's syntax (comma-separated `KEY[=VALUE]`, a
//! missing value meaning `true`): `api/all`, `api/ga`, `api/beta`,
//! `api/alpha`, a group/version (`apps/v1`; the core group is `v1` or
//! `api/v1`) or a resource (`apps/v1/deployments`). Later, more specific
//! keys override earlier, broader ones: `api/all`, then the stability levels,
//! then group/versions, then resources. A disabled group/version is absent
//! from discovery and its paths are 404, because it is absent from the
//! registry the server is started with.
//!
//! Invariant: pure; an unknown group/version or a bad value is an error at
//! start-up, never a silently ignored setting.

use super::registry::{Registry, ResourceInfo};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    All,
    Level(Level),
    GroupVersion { group: String, version: String },
    Resource { group: String, version: String, resource: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Ga,
    Beta,
    Alpha,
}

fn level_of(version: &str) -> Level {
    if version.contains("alpha") {
        Level::Alpha
    } else if version.contains("beta") {
        Level::Beta
    } else {
        Level::Ga
    }
}

/// A parsed `--runtime-config`; the default enables everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    entries: Vec<(Key, bool)>,
}

impl RuntimeConfig {
    /// Parses the flag's value.
    pub fn parse(text: &str) -> Result<RuntimeConfig, String> {
        let mut entries = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = match pair.split_once('=') {
                Some((k, v)) => (k.trim(), v.trim()),
                None => (pair, "true"),
            };
            let enabled = match value {
                "" | "true" => true,
                "false" => false,
                other => return Err(format!("invalid value of {key}: {other}, err: expected true or false")),
            };
            let key = match key {
                "api/all" => Key::All,
                "api/ga" => Key::Level(Level::Ga),
                "api/beta" => Key::Level(Level::Beta),
                "api/alpha" => Key::Level(Level::Alpha),
                other => {
                    let other = other.strip_prefix("api/").filter(|rest| !rest.contains('/')).unwrap_or(other);
                    let parts: Vec<&str> = other.split('/').collect();
                    match parts.as_slice() {
                        [version] if !version.is_empty() => {
                            Key::GroupVersion { group: String::new(), version: version.to_string() }
                        }
                        [group, version] if !group.is_empty() && !version.is_empty() => {
                            // `v1/pods`: a core resource.
                            if group.starts_with('v') && group[1..].starts_with(|c: char| c.is_ascii_digit()) {
                                Key::Resource {
                                    group: String::new(),
                                    version: group.to_string(),
                                    resource: version.to_string(),
                                }
                            } else {
                                Key::GroupVersion { group: group.to_string(), version: version.to_string() }
                            }
                        }
                        [group, version, resource] if [group, version, resource].iter().all(|s| !s.is_empty()) => {
                            Key::Resource {
                                group: group.to_string(),
                                version: version.to_string(),
                                resource: resource.to_string(),
                            }
                        }
                        _ => return Err(format!("invalid key {other:?} in --runtime-config")),
                    }
                }
            };
            entries.push((key, enabled));
        }
        Ok(RuntimeConfig { entries })
    }

    /// Whether `info` is served under this configuration.
    pub fn enables(&self, info: &ResourceInfo) -> bool {
        let mut enabled = true;
        let rank = |key: &Key| match key {
            Key::All => 0,
            Key::Level(_) => 1,
            Key::GroupVersion { .. } => 2,
            Key::Resource { .. } => 3,
        };
        for stage in 0..4 {
            for (key, value) in self.entries.iter().filter(|(k, _)| rank(k) == stage) {
                let applies = match key {
                    Key::All => true,
                    Key::Level(level) => *level == level_of(&info.version),
                    Key::GroupVersion { group, version } => *group == info.group && *version == info.version,
                    Key::Resource { group, version, resource } => {
                        *group == info.group && *version == info.version && *resource == info.resource
                    }
                };
                if applies {
                    enabled = *value;
                }
            }
        }
        enabled
    }

    /// The registry without what this configuration disables; an error names
    /// group/versions or resources the registry does not know.
    pub fn apply(&self, registry: Registry) -> Result<Registry, String> {
        let mut unknown = Vec::new();
        for (key, _) in &self.entries {
            match key {
                Key::GroupVersion { group, version } => {
                    if registry.resources_of(group, version).next().is_none() {
                        unknown.push(if group.is_empty() { version.clone() } else { format!("{group}/{version}") });
                    }
                }
                Key::Resource { group, version, resource } => {
                    if registry.lookup(group, version, resource).is_none() {
                        let gv = if group.is_empty() { version.clone() } else { format!("{group}/{version}") };
                        unknown.push(format!("{gv}/{resource}"));
                    }
                }
                Key::All | Key::Level(_) => {}
            }
        }
        if !unknown.is_empty() {
            return Err(format!("--runtime-config: unknown api groups {}", unknown.join(",")));
        }
        let disabled: Vec<(String, String, String)> = registry
            .iter()
            .filter(|info| !self.enables(info))
            .map(|info| (info.group.clone(), info.version.clone(), info.resource.clone()))
            .collect();
        Ok(registry.without(&disabled))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(config: &str, group: &str, version: &str, resource: &str) -> bool {
        let registry = RuntimeConfig::parse(config).unwrap().apply(Registry::builtin()).unwrap();
        registry.lookup(group, version, resource).is_some()
    }

    #[test]
    fn everything_is_served_by_default() {
        assert!(served("", "apps", "v1", "deployments"));
        assert!(served("", "", "v1", "pods"));
    }

    #[test]
    fn a_group_version_can_be_disabled() {
        assert!(!served("batch/v1=false", "batch", "v1", "jobs"));
        assert!(served("batch/v1=false", "apps", "v1", "deployments"));
    }

    #[test]
    fn specific_keys_override_api_all() {
        let config = "api/all=false,apps/v1=true,v1";
        assert!(served(config, "apps", "v1", "deployments"));
        assert!(served(config, "", "v1", "configmaps"));
        assert!(!served(config, "batch", "v1", "jobs"));
        // Order in the flag does not matter; specificity does.
        assert!(served("apps/v1,api/all=false", "apps", "v1", "deployments"));
        assert!(served("api/v1=true,api/all=false", "", "v1", "pods"));
    }

    #[test]
    fn resources_can_be_disabled_one_by_one() {
        assert!(!served("apps/v1/deployments=false", "apps", "v1", "deployments"));
        assert!(served("apps/v1/deployments=false", "apps", "v1", "statefulsets"));
        assert!(!served("v1/secrets=false", "", "v1", "secrets"));
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(RuntimeConfig::parse("apps/v1=maybe").is_err());
        assert!(RuntimeConfig::parse("a/b/c/d").is_err());
        let unknown = RuntimeConfig::parse("example.com/v1=false").unwrap().apply(Registry::builtin());
        assert!(unknown.unwrap_err().contains("example.com/v1"));
        assert!(RuntimeConfig::parse("apps/v1/nothings=false").unwrap().apply(Registry::builtin()).is_err());
    }
}

//! Allocation of what must be unique across the cluster (Service cluster IPs
//! from `--service-cluster-ip-range`, node ports from
//! `--service-node-port-range`): the pure part, which picks candidates and
//! says what to write; the API layer writes the claims to the log.

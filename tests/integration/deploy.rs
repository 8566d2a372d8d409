//! What ships beside the binary: the Kubernetes ConfigMap carries the default configuration
//! verbatim, the alert rules pass their promtool unit tests, and the Python client works
//! against a live daemon.

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_kubernetes_config_map_is_the_default_configuration_byte_for_byte() {
    let source = std::fs::read(repo().join("config/ragstream.toml")).unwrap();
    let copy = std::fs::read(repo().join("deploy/kubernetes/base/ragstream.toml")).unwrap();
    assert!(
        source == copy,
        "deploy/kubernetes/base/ragstream.toml differs from config/ragstream.toml: \
         run deploy/kubernetes/sync-config"
    );
    let kustomization =
        std::fs::read_to_string(repo().join("deploy/kubernetes/base/kustomization.yaml")).unwrap();
    assert!(
        kustomization.contains("ragstream.toml"),
        "the ConfigMap is generated from the copy"
    );
}

#[test]
fn the_python_client_passes_its_live_test_against_a_daemon() {
    let out = Command::new(repo().join("clients/python/run-live-test"))
        .arg(env!("CARGO_BIN_EXE_ragstream"))
        .env_remove("RAGSTREAM_LOG")
        .output()
        .expect("clients/python/run-live-test runs");
    assert!(
        out.status.success(),
        "python client live test failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_alert_rules_pass_their_unit_tests() {
    let out = Command::new("promtool")
        .args(["test", "rules"])
        .arg(repo().join("deploy/prometheus/rules.test.yml"))
        .output()
        .expect("promtool (Debian package prometheus, installed by scripts/setup)");
    assert!(
        out.status.success(),
        "promtool test rules failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

//! What ships beside the binary: every kustomization renders, validates and carries the
//! default configuration verbatim, the alert rules pass their promtool unit tests, the image
//! builds and runs, and the Python client works against a live daemon.

use std::path::Path;
use std::process::Command;

use crate::common::succeeded;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_python_client_passes_its_live_test_against_a_daemon() {
    succeeded(
        Command::new(repo().join("clients/python/run-live-test"))
            .arg(env!("CARGO_BIN_EXE_ragstream"))
            .env_remove("RAGSTREAM_LOG"),
    );
}

/// `deploy/test-image`: the Dockerfile's models and runtime stages build around the suite's
/// binary, and the image runs locked down as the manifests run it (ready, healthy, a document
/// found, SIGTERM exits 0) with the transformer and with the static model.
#[test]
fn the_image_builds_and_runs_locked_down() {
    let out = succeeded(
        Command::new(repo().join("deploy/test-image"))
            .env("IMAGE_TEST_BIN", env!("CARGO_BIN_EXE_ragstream")),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
}

#[test]
fn the_alert_rules_pass_their_unit_tests() {
    succeeded(
        Command::new("promtool")
            .args(["test", "rules"])
            .arg(repo().join("deploy/prometheus/rules.test.yml")),
    );
}

/// `kubectl kustomize` of `dir` (under `deploy/kubernetes`), as JSON documents.
fn rendered(dir: &str) -> Vec<serde_json::Value> {
    let kubectl = std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".cache/ragstream/bin/kubectl"))
        .filter(|k| k.is_file())
        .expect("kubectl in ~/.cache/ragstream/bin: run scripts/setup");
    let out = succeeded(
        Command::new(kubectl)
            .arg("kustomize")
            .arg(repo().join("deploy/kubernetes").join(dir)),
    );
    let yaml = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(yaml.path(), &out.stdout).unwrap();
    // The Kubernetes 1.32 schemas (deploy/README.md), strict: a misspelt field is an error.
    // The ServiceMonitor is a CRD, with no schema there. kubernetes-validate (PyPI) is
    // installed by scripts/setup; through python3 -m, since a console script installed by
    // pip may not be on PATH yet (pyenv shims appear only after a rehash).
    succeeded(
        Command::new("python3")
            .args([
                "-m",
                "kubernetes_validate",
                "--strict",
                "--quiet",
                "-k",
                "1.32.0",
            ])
            .arg(yaml.path()),
    );
    let json = succeeded(
        Command::new("python3")
            .args([
                "-c",
                "import json, sys, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)",
            ])
            .stdin(std::fs::File::open(yaml.path()).unwrap()),
    );
    serde_json::from_slice(&json.stdout).unwrap()
}

/// A Kubernetes quantity of memory in bytes (`5Gi`, `512Mi`).
fn memory_bytes(quantity: &str) -> u64 {
    let (number, unit) = quantity.split_at(quantity.find(|c: char| c.is_alphabetic()).unwrap());
    let scale: u64 = match unit {
        "Gi" => 1 << 30,
        "Mi" => 1 << 20,
        other => panic!("unexpected memory unit {other:?}"),
    };
    number.parse::<u64>().unwrap() * scale
}

#[test]
fn every_kustomization_renders_validates_and_runs_locked_down_with_the_default_configuration() {
    let default_config = std::fs::read_to_string(repo().join("config/ragstream.toml")).unwrap();
    for dir in ["base", "overlays/dev", "overlays/production"] {
        let docs = rendered(dir);
        let of_kind = |kind: &str| -> Vec<&serde_json::Value> {
            docs.iter().filter(|d| d["kind"] == kind).collect()
        };
        let config_maps = of_kind("ConfigMap");
        assert_eq!(config_maps.len(), 1, "{dir}");
        assert!(
            config_maps[0]["data"]["ragstream.toml"] == default_config.as_str(),
            "{dir}: the ConfigMap is not config/ragstream.toml: run deploy/kubernetes/sync-config"
        );
        // Only production scrapes through the Prometheus operator (a component).
        assert_eq!(
            of_kind("ServiceMonitor").len(),
            usize::from(dir == "overlays/production"),
            "{dir}"
        );
        let deployments = of_kind("Deployment");
        assert_eq!(deployments.len(), 1, "{dir}");
        let pod = &deployments[0]["spec"]["template"]["spec"];
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault",
            "{dir}"
        );
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{dir}");
        let volumes = pod["volumes"].as_array().unwrap();
        for container in pod["containers"].as_array().unwrap() {
            let security = &container["securityContext"];
            assert_eq!(security["readOnlyRootFilesystem"], true, "{dir}");
            assert_eq!(security["allowPrivilegeEscalation"], false, "{dir}");
            assert_eq!(security["capabilities"]["drop"][0], "ALL", "{dir}");
            // A read-only root needs writable volumes where the daemon writes: its data
            // directory and /tmp.
            for path in ["/var/lib/ragstream", "/tmp"] {
                let mount = container["volumeMounts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|m| m["mountPath"] == path)
                    .unwrap_or_else(|| panic!("{dir}: nothing mounted at {path}"));
                assert_ne!(mount["readOnly"], true, "{dir}: {path}");
                assert!(
                    volumes.iter().any(|v| v["name"] == mount["name"]),
                    "{dir}: {path}"
                );
            }
            let resources = &container["resources"];
            let request = memory_bytes(resources["requests"]["memory"].as_str().unwrap());
            let limit = memory_bytes(resources["limits"]["memory"].as_str().unwrap());
            assert!(request <= limit, "{dir}");
            assert!(
                resources["limits"]["cpu"].is_string(),
                "{dir}: no CPU limit"
            );
            if dir != "overlays/dev" {
                // At least the worst peak measured at a million chunks, with headroom: the
                // comment above `resources` in base/deployment.yaml gives the figures.
                assert!(limit >= 4 << 30, "{dir}: memory limit {limit}");
            }
        }
    }
}

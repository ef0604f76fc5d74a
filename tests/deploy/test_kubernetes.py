"""deploy/kubernetes: valid for the pinned Kubernetes version, and consistent with the image, the
settings and what `serve` serves."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import yaml

from bot.settings import Settings
from tests.deploy.files import (
    KUBERNETES,
    KUBERNETES_VERSION,
    cli_commands,
    final_stage,
    kubernetes_documents,
    one,
    pod_spec,
    setting_names,
)

REQUIRED_SECRETS = {"SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "DATABASE_URL"}
OPTIONAL_SECRETS = {
    "ANTHROPIC_API_KEY",
    "SLACK_APP_TOKEN",
    "ONCALL_GRAPH_CATALOG_TOKEN",
    "PAGERDUTY_API_TOKEN",
    "PAGERDUTY_WEBHOOK_SECRETS",
}


def deployment() -> dict[str, Any]:
    return kubernetes_documents()["Deployment/oncall-graph"]


def container(document: dict[str, Any]) -> dict[str, Any]:
    (only,) = pod_spec(document)["containers"]
    assert isinstance(only, dict)
    return only


def configmap() -> dict[str, str]:
    data = kubernetes_documents()["ConfigMap/oncall-graph"]["data"]
    assert all(isinstance(v, str) for v in data.values()), "ConfigMap values must be strings"
    return dict(data)


def test_every_manifest_is_valid_for_the_pinned_kubernetes_version() -> None:
    files = sorted(str(p) for p in KUBERNETES.glob("*.yaml") if p.name != "kustomization.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "kubernetes_validate", "--strict", "-k", KUBERNETES_VERSION, *files],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("passed for resource") == len(kubernetes_documents())


def test_the_kustomization_applies_every_manifest_but_the_example_secret() -> None:
    kustomization = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())
    manifests = {p.name for p in KUBERNETES.glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    assert set(kustomization["resources"]) == manifests
    images = {image["name"] for image in kustomization["images"]}
    for document in (deployment(), kubernetes_documents()["Job/oncall-graph-migrate"]):
        assert container(document)["image"].split(":")[0] in images


def test_the_configmap_holds_valid_values_of_real_settings_and_no_secrets() -> None:
    data = configmap()
    assert set(data) <= setting_names() - REQUIRED_SECRETS - OPTIONAL_SECRETS
    settings = Settings.model_validate(data)  # what pydantic-settings makes of the same strings
    assert settings.port == int(data["PORT"])
    settings.stale_after_map()


def test_the_bot_reads_its_secrets_from_the_secret_and_only_real_settings() -> None:
    bot = container(deployment())
    env = {item["name"]: item for item in bot["env"]}
    assert set(env) <= setting_names()
    refs = {name: item["valueFrom"]["secretKeyRef"] for name, item in env.items()}
    assert set(refs) == REQUIRED_SECRETS | OPTIONAL_SECRETS
    for name, ref in refs.items():
        assert ref["key"] == name and ref["name"] == "oncall-graph"
        assert ref.get("optional", False) == (name in OPTIONAL_SECRETS), name
    example = kubernetes_documents()["Secret/oncall-graph"]["stringData"]
    assert set(example) >= REQUIRED_SECRETS
    assert bot["envFrom"] == [{"configMapRef": {"name": "oncall-graph"}}]


def named_port(name_or_number: str | int) -> int:
    ports = {p["name"]: p["containerPort"] for p in container(deployment())["ports"]}
    return ports[name_or_number] if isinstance(name_or_number, str) else name_or_number


def test_probes_reach_the_port_and_path_that_serve_serves() -> None:
    bot = container(deployment())
    serves = int(configmap().get("PORT", Settings.model_fields["port"].default))
    assert serves == Settings.model_fields["port"].default == 3000
    readiness = bot["readinessProbe"]["httpGet"]
    assert readiness["path"] == "/healthz" and named_port(readiness["port"]) == serves
    for probe in ("startupProbe", "livenessProbe"):
        action = bot[probe].get("tcpSocket") or bot[probe].get("httpGet")
        assert named_port(action["port"]) == serves, probe
    assert "httpGet" not in bot["livenessProbe"] or bot["livenessProbe"]["httpGet"]["path"] != "/healthz", (
        "/healthz is 503 until a graph is loaded: as liveness it would restart pods still loading"
    )
    startup = bot["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 120, "a big catalog takes tens of seconds"


def test_the_service_and_the_budget_select_the_bot_pods() -> None:
    documents = kubernetes_documents()
    labels = deployment()["spec"]["template"]["metadata"]["labels"]
    assert deployment()["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = documents["Service/oncall-graph"]["spec"]
    assert service["selector"].items() <= labels.items()
    assert named_port(service["ports"][0]["targetPort"]) == int(configmap()["PORT"])
    budget = documents["PodDisruptionBudget/oncall-graph"]["spec"]
    assert budget["selector"]["matchLabels"].items() <= labels.items()
    assert budget["minAvailable"] < deployment()["spec"]["replicas"] == 2, "a budget of all replicas blocks drains"
    job_labels = documents["Job/oncall-graph-migrate"]["spec"]["template"]["metadata"]["labels"]
    assert not service["selector"].items() <= job_labels.items(), "the Service must not send Slack to the Job"


def test_the_migration_job_runs_the_migrate_command_of_the_same_image() -> None:
    job = kubernetes_documents()["Job/oncall-graph-migrate"]
    migrate = container(job)
    assert migrate["args"] == ["migrate"] and migrate["args"][0] in cli_commands()
    assert migrate["image"] == container(deployment())["image"]
    assert "command" not in migrate, "the image's ENTRYPOINT (oncall-graph) runs the args"
    assert pod_spec(job)["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] >= 1
    assert [e["name"] for e in migrate["env"]] == ["DATABASE_URL"]


def test_pods_run_as_the_image_user_without_privileges() -> None:
    uid = int(one(final_stage(), "USER").args.split(":")[0])
    for document in (deployment(), kubernetes_documents()["Job/oncall-graph-migrate"]):
        pod = pod_spec(document)
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == uid
        assert pod["enableServiceLinks"] is False, "service links inject ONCALL_GRAPH_* variables"
        security = container(document)["securityContext"]
        assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
        assert security["capabilities"]["drop"] == ["ALL"]
        mounts = {m["mountPath"] for m in container(document)["volumeMounts"]}
        assert "/tmp" in mounts, "a read-only root needs a writable /tmp"
        resources = container(document)["resources"]
        assert {"cpu", "memory"} <= set(resources["requests"]) and "memory" in resources["limits"]
    assert deployment()["spec"]["replicas"] == 2

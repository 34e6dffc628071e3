"""deploy/k8s-*.yaml against the Kubernetes API schema: every resource, strict (no unknown field), offline.

kubernetes-validate (a dev dependency, pinned) ships the JSON schemas of each Kubernetes release it supports, so
nothing is fetched. The manifests are validated against the oldest release they claim (the Indexed Job's
backoffLimitPerIndex needs 1.29) and the newest the validator knows. This says the manifests are well-formed
Kubernetes objects, not that they run: no cluster runs them here (docs/scaling.md).
"""

import copy

import kubernetes_validate
import pytest
import yaml

OLDEST = "1.29"
MANIFESTS = ("k8s-indexed-job.yaml", "k8s-merge-job.yaml")
KINDS = {"k8s-indexed-job.yaml": ["PersistentVolumeClaim", "Job"], "k8s-merge-job.yaml": ["Job"]}


def _resources(repo_root, name):
    text = (repo_root / "deploy" / name).read_text(encoding="utf-8")
    return [document for document in yaml.safe_load_all(text) if document]


def _versions():
    return [OLDEST, kubernetes_validate.latest_version()]


@pytest.mark.parametrize("name", MANIFESTS)
@pytest.mark.parametrize("version", _versions())
def test_manifest_is_valid_against_the_kubernetes_api_schema(repo_root, name, version):
    resources = _resources(repo_root, name)
    assert [resource["kind"] for resource in resources] == KINDS[name]
    for resource in resources:
        kubernetes_validate.validate(resource, version, strict=True)  # raises ValidationError with the path


def _indexed_job(repo_root):
    return copy.deepcopy(next(r for r in _resources(repo_root, "k8s-indexed-job.yaml") if r["kind"] == "Job"))


@pytest.mark.parametrize(("break_it", "complaint"), [
    (lambda job: job["spec"].update(completion=8), "completion"),  # misspelt: only strict validation sees it
    (lambda job: job["spec"].update(completions="eight"), "eight"),
    (lambda job: job["spec"]["template"]["spec"]["containers"][0].pop("name"), "name"),
    (lambda job: job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0].pop("status"), "status"),
])
def test_the_validation_catches_a_broken_manifest(repo_root, break_it, complaint):
    job = _indexed_job(repo_root)
    break_it(job)
    with pytest.raises(kubernetes_validate.ValidationError, match=complaint):
        kubernetes_validate.validate(job, OLDEST, strict=True)

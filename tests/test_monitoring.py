"""The Grafana dashboard and the Prometheus alert rules in docs/monitoring use only metrics that
GET /metrics exposes (a renamed metric would leave a panel empty and an alert silent)."""

import json
import re
from pathlib import Path

import yaml
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from memory.core import metrics

DOCS = Path(__file__).resolve().parents[1] / "docs" / "monitoring"
METRIC = re.compile(r"\b(clara_[a-z0-9_]+)")
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
    "gauge": ("",),
}


def _exposed() -> set[str]:
    """Every series name /metrics can show, whether or not it has a value yet."""
    # A histogram with labels shows no series until observed: give each one a value.
    for histogram in (
        metrics.HTTP_REQUEST_SECONDS.labels("x", "GET"),
        metrics.HTTP_DB_SECONDS.labels("x"),
        metrics.TASK_SECONDS.labels("x"),
        metrics.ALERT_DELIVERY_SECONDS.labels("x"),
    ):
        histogram.observe(0)
    for counter in (
        metrics.HTTP_REQUESTS.labels("x", "GET", "200"),
        metrics.TASK_FAILURES.labels("x"),
        metrics.WEBHOOK_FAILURES.labels("x", "x"),
        metrics.ESCALATIONS.labels("x"),
    ):
        counter.inc(0)
    response = Client().get("/metrics")
    assert response.status_code == 200
    names = set()
    for family in text_string_to_metric_families(response.content.decode()):
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


def _expressions_of_dashboard() -> list[str]:
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    exprs += [v.get("query", "") for v in dashboard["templating"]["list"]]
    return exprs


def _expressions_of_rules() -> list[str]:
    rules = yaml.safe_load((DOCS / "prometheus-alerts.yml").read_text())
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def test_the_dashboard_and_alert_rules_use_only_exposed_metrics(db):
    exposed = _exposed()
    dashboard, rules = _expressions_of_dashboard(), _expressions_of_rules()
    assert len(dashboard) >= 12 and len(rules) >= 8
    used = {name for expr in dashboard + rules for name in METRIC.findall(expr)}
    assert used - exposed == set()
    # Each part of the list is on the dashboard.
    on_dashboard = " ".join(dashboard)
    for name in (
        "clara_http_request_duration_seconds_bucket",
        "clara_http_requests_total",
        "clara_http_request_db_seconds_sum",
        "clara_celery_queue_depth",
        "clara_task_duration_seconds_bucket",
        "clara_task_failures_total",
        "clara_alert_delivery_seconds_bucket",
        "clara_webhook_failures_total",
        "clara_escalations_total",
        "clara_recovery_log_pending",
        "clara_search_memory_bytes",
    ):
        assert name in on_dashboard, name


def test_every_alert_rule_is_complete():
    rules = yaml.safe_load((DOCS / "prometheus-alerts.yml").read_text())
    names = []
    for group in rules["groups"]:
        for rule in group["rules"]:
            names.append(rule["alert"])
            assert rule["labels"]["severity"] in ("warning", "critical"), rule["alert"]
            assert rule["annotations"]["summary"], rule["alert"]
            assert rule["expr"].count("(") == rule["expr"].count(")"), rule["alert"]
    assert len(names) == len(set(names))

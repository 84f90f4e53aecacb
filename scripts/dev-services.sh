#!/usr/bin/env bash
# Everything the test suite needs from the machine, on a fresh Debian machine, in one command (CI runs it too):
#   - the Debian packages the suite runs for real: Chromium (the dashboard; never a downloaded browser),
#     Prometheus and Alertmanager (alerting, scraping), nginx (the replicas' load balancer), PostgreSQL;
#   - a PostgreSQL server on 127.0.0.1:5432 with trust authentication on loopback, a `root` role and a `test`
#     database, started when none answers there.
# Idempotent: a second run, or a machine where all of it is already in place, changes nothing.
# Each test starts its own Chromium, Prometheus, Alertmanager and nginx on loopback ports, so the packages' own
# daemons are kept from starting at install; only PostgreSQL runs as a service.
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v prometheus-alertmanager >/dev/null || missing+=(prometheus-alertmanager)
command -v prometheus >/dev/null || missing+=(prometheus)
command -v nginx >/dev/null || missing+=(nginx)
command -v pg_ctlcluster >/dev/null || missing+=(postgresql)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "dev-services: installing ${missing[*]}"
  started=$(date +%s)
  # policy-rc.d 101 keeps the packages' daemons from starting (and PostgreSQL's cluster: started below, on our terms).
  printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
  as_root chmod +x /usr/sbin/policy-rc.d
  trap 'as_root rm -f /usr/sbin/policy-rc.d' EXIT
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  as_root rm -f /usr/sbin/policy-rc.d
  trap - EXIT
  echo "dev-services: installed in $(( $(date +%s) - started )) s"
fi

if pg_isready -q -h "$PG_HOST" -p "$PG_PORT"; then
  echo "dev-services: PostgreSQL already answers on $PG_HOST:$PG_PORT"
else
  # The Debian cluster: the newest installed version's `main` (created by the package; made here if absent).
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
    as_root pg_createcluster "$version" main >/dev/null
  fi
  conf_dir="/etc/postgresql/$version/main"
  hba="$conf_dir/pg_hba.conf"
  # Trust on loopback only: the suite connects as `root` without a password; nothing listens beyond 127.0.0.1.
  if ! as_root grep -q '^# extscope: trust on loopback' "$hba"; then
    as_root sed -i -e 's/^\(host[[:space:]].*\)scram-sha-256$/\1trust/' -e 's/^\(host[[:space:]].*\)md5$/\1trust/' "$hba"
    printf '# extscope: trust on loopback (scripts/dev-services.sh)\n' | as_root tee -a "$hba" >/dev/null
  fi
  as_root sed -i -e "s/^#\?listen_addresses = .*/listen_addresses = '$PG_HOST'/" -e "s/^#\?port = .*/port = $PG_PORT/" \
    "$conf_dir/postgresql.conf"
  as_root pg_ctlcluster "$version" main start
  for _ in $(seq 1 60); do
    pg_isready -q -h "$PG_HOST" -p "$PG_PORT" && break
    sleep 0.5
  done
  pg_isready -h "$PG_HOST" -p "$PG_PORT"
  echo "dev-services: PostgreSQL $version started on $PG_HOST:$PG_PORT"
fi

# The role and database the suite expects (as the postgres superuser over the local socket, peer authentication),
# unless the suite can already connect.
if psql -h "$PG_HOST" -p "$PG_PORT" -U root -d test -qAtX -c 'SELECT 1' >/dev/null 2>&1; then
  echo "dev-services: ready (postgres://root@$PG_HOST:$PG_PORT/test)"
  exit 0
fi
psql_admin() {
  if [ "$(id -u)" -eq 0 ]; then su postgres -c "psql -p $PG_PORT -qAtX -d postgres -c \"$1\""
  else sudo -u postgres psql -p "$PG_PORT" -qAtX -d postgres -c "$1"; fi
}
if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = 'root'")" != "1" ]; then
  psql_admin "CREATE ROLE root SUPERUSER LOGIN"
  echo "dev-services: role root created"
fi
if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = 'test'")" != "1" ]; then
  psql_admin "CREATE DATABASE test OWNER root"
  echo "dev-services: database test created"
fi
psql -h "$PG_HOST" -p "$PG_PORT" -U root -d test -qAtX -c 'SELECT 1' >/dev/null
echo "dev-services: ready (postgres://root@$PG_HOST:$PG_PORT/test)"

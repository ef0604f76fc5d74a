#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on a free loopback port and prints its SQLAlchemy URL.
# Usage: url=$(.ci/start-postgres.sh DIR); stop with: pg_ctl -D DIR/data stop
set -euo pipefail
dir=$1
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
mkdir -p "$dir"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres >"$dir/initdb.log"
as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
echo "postgresql+psycopg://postgres@127.0.0.1:$port/postgres"

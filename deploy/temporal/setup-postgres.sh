#!/bin/sh
# Temporal's two PostgreSQL databases and their schemas, for compose.yaml.
# Safe to repeat: create fails harmlessly on an existing database, and
# update-schema moves an existing one to this release's schema.
set -eu
tool="temporal-sql-tool --plugin postgres12 --ep postgresql -u temporal -p 5432"
for db in temporal temporal_visibility; do
  $tool --db "$db" create || true
done
$tool --db temporal setup-schema -v 0.0 || true
$tool --db temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned
$tool --db temporal_visibility setup-schema -v 0.0 || true
$tool --db temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned
echo "Temporal's schema is ready."

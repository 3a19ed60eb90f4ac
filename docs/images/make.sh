#!/usr/bin/env bash
# Remake docs/images/map.png and web.png with townbot's own commands (offline model, seed 0):
# the Valentine's Day party at Hobbs Cafe on the second afternoon, a visitor on the way there
# and a stove on fire. Needs Debian's chromium for the page's picture. Run from the checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
town=$(mktemp -d)/party.db
townbot=.venv/bin/townbot
$townbot sim --days 1 --db "$town" --scenario valentines-party --quiet >/dev/null 2>&1
$townbot sim --hours 9 --db "$town" --quiet >/dev/null 2>&1
printf '%s\n' '/join Ada a reporter for the Gazette' '/go Hobbs Cafe' \
    "/set <Isabella Rodriguez's apartment: kitchen: stove> is burning" |
    $townbot play --db "$town" --ticks 1 --speed 0 >/dev/null
$townbot sim --hours 1.5 --db "$town" --quiet >/dev/null 2>&1
$townbot map --db "$town" --out docs/images/map.png
$townbot web --db "$town" --port 8777 & server=$!
trap 'kill $server' EXIT
sleep 3
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,900 \
    --virtual-time-budget=8000 --screenshot=docs/images/web.png http://127.0.0.1:8777/ 2>/dev/null

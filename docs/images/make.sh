#!/usr/bin/env bash
# Remake docs/images/map.png, web.png (a desktop, 1440x900) and web-phone.png (390x844) with
# townbot's own commands (offline model, seed 0): the Valentine's Day party at Hobbs Cafe on
# the second afternoon, a visitor on the way there and a stove on fire. Needs Debian's
# chromium for the page's pictures. Run from the checkout; TOWNBOT names another townbot to
# run (e.g. TOWNBOT="python -m townbot").
set -euo pipefail
cd "$(dirname "$0")/../.."
town=$(mktemp -d)/party.db
townbot=${TOWNBOT:-.venv/bin/townbot}
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
for size in 1440,900:web 390,844:web-phone; do
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="${size%:*}" \
        --virtual-time-budget=8000 --screenshot="docs/images/${size#*:}.png" \
        http://127.0.0.1:8777/ 2>/dev/null
done

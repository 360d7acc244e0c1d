#!/usr/bin/env bash
# record.sh: run ccusage on each Claude Code session log and Codex rollout
# log the ccusage test projects, and write what it prints to ccusage.json.
# TestCCUsage holds the usage views to these numbers; it does not need
# ccusage itself.
#
# Usage: internal/project/testdata/ccusage/record.sh [ccusage version]
# Needs node and npm (ccusage 20 runs a native binary, published as an
# optional dependency per platform).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
root="$(cd "$here/../../../.." && pwd -P)"
version="${1:-20.0.24}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm init -y >/dev/null && npm install --silent "ccusage@$version" \
	"@ccusage/ccusage-$(node -p 'process.platform')-$(node -p 'process.arch')@$version" >/dev/null)

logs=("$root"/testdata/recordings/claude-log/*.jsonl "$here"/crafted.jsonl)
for log in "${logs[@]}"; do
	name="$(basename "$(dirname "$log")")/$(basename "$log" .jsonl)"
	[ "$log" = "$here/crafted.jsonl" ] && name="ccusage/crafted"
	session="$(grep -o '"sessionId":"[^"]*"' "$log" | head -1 | cut -d'"' -f4)"
	# One configuration directory per log: ccusage drops entries whose
	# message and request ids it has seen in any file, and the recordings
	# were made against a fake API that numbers every session's messages
	# msg_fake000001... under request id req_fake.
	dir="$work/claude/$name/projects/-SCRATCH-project"
	mkdir -p "$dir" "$work/out/$name"
	cp "$log" "$dir/$session.jsonl"
	for report in session daily; do
		(cd "$work" && CLAUDE_CONFIG_DIR="$work/claude/$name" npx ccusage claude "$report" --json --offline --timezone UTC) \
			>"$work/out/$name/$report.json"
	done
done
for log in "$root"/testdata/recordings/codex-rollout/*.jsonl; do
	name="codex-rollout/$(basename "$log" .jsonl)"
	dir="$work/codex/$name/sessions/2026/12/02"
	mkdir -p "$dir" "$work/out/$name"
	cp "$log" "$dir/rollout-2026-12-02T00-00-00-$(basename "$log")"
	for report in session daily; do
		(cd "$work" && CODEX_HOME="$work/codex/$name" npx ccusage codex "$report" --json --offline --timezone UTC) \
			>"$work/out/$name/$report.json"
	done
done
node - "$work/out" "$version" >"$here/ccusage.json" <<'JS'
const fs = require('fs'), path = require('path');
const [out, version] = process.argv.slice(2);
const logs = {};
for (const set of fs.readdirSync(out).sort()) {
	for (const name of fs.readdirSync(path.join(out, set)).sort()) {
		const read = (r) => JSON.parse(fs.readFileSync(path.join(out, set, name, r + '.json')));
		logs[set + '/' + name] = { session: read('session'), daily: read('daily') };
	}
}
const command = 'CLAUDE_CONFIG_DIR=<a directory holding projects/-SCRATCH-project/<session>.jsonl, one per log> ' +
	'ccusage claude {session,daily} --json --offline --timezone UTC; ' +
	'CODEX_HOME=<a directory holding sessions/2026/12/02/rollout-<log>.jsonl, one per log> ' +
	'ccusage codex {session,daily} --json --offline --timezone UTC';
console.log(JSON.stringify({ ccusage: version, command, logs }, null, 2));
JS
echo "wrote $here/ccusage.json" >&2

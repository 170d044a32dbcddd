#!/usr/bin/env bash
# pgbt-gen report --textfile as a fleet reads it (each server build once,
# the bpftraces in turn): Debian's prometheus-node-exporter with its
# textfile collector on the reader's directory and Debian's prometheus
# scraping it every second, both started here on loopback ports. waits
# and xid-rate (interval=1) run live into readers, bpftrace -f json piped
# as it prints:
#   - PromQL through Prometheus's HTTP API gives the induced figures: a
#     session's 4 x pg_sleep(0.5) as pgbt_wait_seconds_total of client
#     backends, 2.0 s +-5%, in its server's series (port, datadir), and 4
#     in pgbt_wait_duration_seconds_count, histogram_quantile(0.5) in
#     their log2 bucket (0.262144 to 0.524288 s); 25 XIDs of a session exactly in
#     pgbt_xids_total under its PID;
#   - a reader racing the writer (reading the .prom file as fast as it
#     can for every report) never sees a file promtool rejects;
#   - the file is gone once the trace ends, and node_exporter says so.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

PROM_PORT=19491 NODE_PORT=19591
TF=$E2E_TMP/textfile

start_fleet() {
	local b
	for b in prometheus prometheus-node-exporter promtool curl; do
		command -v "$b" >/dev/null || { skip "fleet: no $b (tests/setup/install-deps.sh installs it)"; return 1; }
	done
	mkdir -p "$TF" "$E2E_TMP/tsdb"
	pgbt_bg bash -c "exec prometheus-node-exporter --web.listen-address=127.0.0.1:$NODE_PORT \
		--collector.disable-defaults --collector.textfile --collector.textfile.directory='$TF' \
		2>'$E2E_TMP/node-exporter.log'"
	cat >"$E2E_TMP/prometheus.yml" <<-EOF
		global:
		  scrape_interval: 1s
		scrape_configs:
		  - job_name: node
		    static_configs:
		      - targets: ['127.0.0.1:$NODE_PORT']
	EOF
	pgbt_bg bash -c "exec prometheus --config.file='$E2E_TMP/prometheus.yml' \
		--storage.tsdb.path='$E2E_TMP/tsdb' --web.listen-address=127.0.0.1:$PROM_PORT \
		2>'$E2E_TMP/prometheus.log'"
	local i
	for i in $(seq 100); do
		promql 'up{job="node"}' | grep -qx 1 && return 0
		sleep 0.2
	done
	fail "fleet: prometheus on 127.0.0.1:$PROM_PORT does not scrape node_exporter on :$NODE_PORT"
	return 1
}

# The value of instant query Q (one series) now, or "".
promql() {
	curl -s --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null || true
}

# Reads FILE as fast as it can while PID runs, each copy checked by
# promtool: prints "reads failures".
race_reader() {
	local file=$1 pid=$2 reads=0 bad=0
	while pgbt_alive "$pid"; do
		if cat "$file" >"$E2E_TMP/race.prom" 2>/dev/null; then
			reads=$((reads + 1))
			promtool check metrics <"$E2E_TMP/race.prom" >/dev/null 2>&1 || {
				bad=$((bad + 1)); cp "$E2E_TMP/race.prom" "$E2E_TMP/race-bad.prom"; }
		fi
	done
	echo "$reads $bad"
}

test_leg() {
	cluster_start "$LEG_BUILD"
	render waits waits interval=1 || { cluster_stop; return 0; }
	render xid-rate xid-rate interval=1 || { cluster_stop; return 0; }
	local s pids=() readers=()
	for s in waits xid-rate; do
		BT_FLAGS="-f json" bt_launch "$E2E_TMP/$s.bt" "$E2E_TMP/$s.out"
		pids+=("$BT_PID")
		# as a pipe would: bpftrace's stdout as it prints (its stderr,
		# which shares the file here, left out)
		pgbt_bg bash -c "tail -n +1 -f --pid=$BT_PID '$E2E_TMP/$s.out' | grep --line-buffered '^{' |
			'$PGBT_GEN' report --textfile '$TF' --format none 2>'$E2E_TMP/$s.rerr'"
		readers+=("$BG_PID")
	done
	bt_attached "${pids[@]}" || { cluster_stop; return 0; }
	local prom=$TF/pgbt_waits_$CL_PORT.prom race
	race_reader "$prom" "${readers[0]}" >"$E2E_TMP/race.out" &
	race=$!

	local xpid
	cl_psql -c "select pg_sleep(0.5)" -c "select pg_sleep(0.5)" -c "select pg_sleep(0.5)" \
		-c "select pg_sleep(0.5)" >/dev/null
	xpid=$({
		echo "select pg_backend_pid();"
		for _ in $(seq 25); do echo "select pg_current_xact_id();"; done
	} | cl_psql)
	xpid=${xpid%%$'\n'*}
	# a report after the last wait, and a scrape of it
	local sel="kind=\"client backend\",event=\"Timeout:PgSleep\",port=\"$CL_PORT\""
	local secs count q50 xids dir ddir=$CL_DIR/data
	[[ -n $CL_ROOT ]] && ddir=${ddir#"$CL_ROOT"}
	for _ in $(seq 60); do
		count=$(promql "pgbt_wait_duration_seconds_count{$sel}")
		[[ $count == 4 ]] && break
		sleep 0.25
	done
	sleep 1.5
	secs=$(promql "pgbt_wait_seconds_total{$sel}")
	q50=$(promql "histogram_quantile(0.5, pgbt_wait_duration_seconds_bucket{$sel})")
	xids=$(promql "pgbt_xids_total{pid=\"$xpid\",port=\"$CL_PORT\"}")
	dir=$(promql "count(pgbt_wait_seconds_total{port=\"$CL_PORT\",datadir=\"$ddir\"})")
	check_near "$LEG: PromQL: client backends' Timeout:PgSleep (ms)" \
		"$(awk -v s="${secs:-0}" 'BEGIN { printf "%d", s * 1000 }')" 2000 100
	check_eq "$LEG: PromQL: 4 of them in the histogram" "${count:-none}" 4
	check_eq "$LEG: PromQL: their median ($q50) in the bucket of 0.262144 to 0.524288 s" \
		"$(awk -v q="${q50:-0}" 'BEGIN { print (q > 0.262144 && q <= 0.524288) }')" 1
	check_eq "$LEG: PromQL: the series carry the data directory" "$((${dir:-0} >= 1))" 1
	# (xid-rate's via=auto: the uprobe, on every machine)
	check_eq "$LEG: PromQL: X's XIDs, exactly" "${xids:-none}" 25

	bt_stop "${pids[@]}"
	local r
	for r in "${readers[@]}"; do wait "$r" || fail "$LEG: a reader failed: $(cat "$E2E_TMP"/*.rerr)"; done
	wait "$race" || true
	local reads bad
	read -r reads bad <"$E2E_TMP/race.out"
	check_eq "$LEG: a reader racing the writer read it often (${reads:-0} times)" "$((${reads:-0} >= 20))" 1
	check_eq "$LEG: ... and never a file promtool rejects" "${bad:-none}" 0
	[[ ${bad:-0} == 0 ]] || _e2e_show "$(promtool check metrics <"$E2E_TMP/race-bad.prom" 2>&1 | head -5)"
	check_empty "$LEG: the textfile is gone when the trace ends" "$(ls -A "$TF")"
	sleep 1.5
	check_eq "$LEG: ... and so are its series" \
		"$(curl -s "http://127.0.0.1:$NODE_PORT/metrics" | grep -c "^pgbt_.*port=\"$CL_PORT\"" || true)" 0
	cluster_stop
}

if start_fleet; then
	for leg in $(e2e_legs_checked each); do
		leg_use "$leg" && test_leg
	done
fi
e2e_done

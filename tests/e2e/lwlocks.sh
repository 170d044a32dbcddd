#!/usr/bin/env bash
# lwlocks and row-locks under bpftrace against real servers (Debian's
# stripped 15, source-built 17 and 18):
#   - lwlocks: pgbench TPC-B, 8 clients on one branch (-s 1), a fixed number
#     of transactions, with four copies attached at once: waits and all,
#     each through USDT (auto) and through uprobes (probe=uprobe). Both
#     paths must see LWLock sleeps on named tranches, about as many, and
#     count the same acquisitions of WALInsert and ProcArray.
#   - row-locks: A holds row (0,1) of r FOR UPDATE; C's SKIP LOCKED skips it
#     (TM_WouldBlock), B's FOR UPDATE waits until A commits 400 ms after B
#     started waiting.
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"
source "$(dirname "$0")/../lib/lock-sessions.sh"

# Sum of the counts of "@MAP[NAME, MODE]: n" lines in FILE, for tranche
# NAME and mode MODE (regexes). Through uprobes the keys are numbers
# "[ID, MODE]", named by the legend lines "@tranche[ID]: NAME" and
# "@lwmode[N]: NAME".
lw_sum() {
	awk -v map="$1" -v name="$2" -v mode="$3" '
		/^@tranche\[[0-9]+\]: / { id = $1; gsub(/[^0-9]/, "", id); tr[id] = $2; next }
		/^@lwmode\[[0-9]+\]: / { id = $1; gsub(/[^0-9]/, "", id); md[id] = $2; next }
		index($0, map "[") == 1 {
			key = substr($0, length(map) + 2); sub(/\]: .*/, "", key)
			split(key, k, ", ")
			line[++n] = k[1] SUBSEP k[2] SUBSEP $NF
		}
		END {
			for (i = 1; i <= n; i++) {
				split(line[i], f, SUBSEP)
				t = (f[1] in tr) ? tr[f[1]] : f[1]
				m = (f[2] in md) ? md[f[2]] : f[2]
				if (t ~ "^(" name ")$" && m ~ "^(" mode ")$") s += f[3]
			}
			print s + 0
		}' "$4"
}

# The ratio a/b with 3 decimals ("inf" when b is 0).
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.3f\n", a / b }'
}

test_lwlocks() {
	local v
	cl_run pgbench -i -s 1 -q >/dev/null 2>&1
	for v in waits all; do
		render "lw-$v" lwlocks output=$v
		render "lw-$v-uprobe" lwlocks output=$v probe=uprobe
	done
	check_contains "pg$V: lwlocks uses USDT on this build" "$(cat "$E2E_TMP/lw-waits.bt")" \
		"postgresql:lwlock__wait__start"
	check_contains "pg$V: lwlocks probe=uprobe sees sleeps in PGSemaphoreLock" \
		"$(cat "$E2E_TMP/lw-waits-uprobe.bt")" ":PGSemaphoreLock"
	local pids=()
	for v in waits waits-uprobe all all-uprobe; do
		bt_start "$E2E_TMP/lw-$v.bt" "$E2E_TMP/lw-$v.out"
		pids+=("$BT_PID")
	done
	cl_run pgbench -n -c 8 -j 2 -t 400 >"$E2E_TMP/pgbench.out" 2>&1
	for v in "${pids[@]}"; do bt_stop "$v"; done

	local named="BufferContent|BufferMapping|WALInsert|WALWrite|LockManager|ProcArray|XactSLRU|XidGen"
	local mode a b
	for v in waits all; do
		# Every mode: a sleep in LWLockWaitForVar or LWLockAcquireOrWait is
		# LW_EXCLUSIVE through USDT and LW_WAIT_UNTIL_FREE through uprobes.
		a=$(lw_sum @waits "$named" "LW_.*" "$E2E_TMP/lw-$v.out")
		b=$(lw_sum @waits "$named" "LW_.*" "$E2E_TMP/lw-$v-uprobe.out")
		check_eq "pg$V: lwlocks output=$v: sleeps on named tranches seen through USDT ($a)" "$((a > 20))" 1
		# A uprobe sleep is one semaphore wait; a USDT one may span several.
		check_near "pg$V: lwlocks output=$v: uprobe/USDT sleeps on named tranches ($b/$a)" \
			"$(ratio "$b" "$a")" 1.05 0.1
		check_contains "pg$V: lwlocks output=$v: a wait-time histogram" \
			"$(cat "$E2E_TMP/lw-$v.out")" "@wait_us[BufferContent, LW_EXCLUSIVE]:"
	done
	for v in "WALInsert LW_EXCLUSIVE" "ProcArray LW_SHARED" "BufferMapping LW_SHARED"; do
		a=$(lw_sum @acquired "${v% *}" "${v#* }" "$E2E_TMP/lw-all.out")
		b=$(lw_sum @acquired "${v% *}" "${v#* }" "$E2E_TMP/lw-all-uprobe.out")
		check_eq "pg$V: lwlocks output=all: $v acquired at least once per transaction ($a)" \
			"$((a >= 3200))" 1
		check_near "pg$V: lwlocks output=all: $v acquisitions, uprobe/USDT ($b/$a)" \
			"$(ratio "$b" "$a")" 1 0.02
	done
}

test_row_locks() {
	local out=$E2E_TMP/row-locks.out r_oid a_pid b_pid c_pid line
	cl_psql -c "create table r (a int); insert into r values (1);"
	r_oid=$(cl_psql -c "select 'r'::regclass::oid")
	render row-locks row-locks
	bt_start "$E2E_TMP/row-locks.bt" "$out"
	{ echo "select pg_backend_pid();"
	  echo "begin;"
	  echo "select * from r for update;"
	  hold_until_waited "locktype = 'transactionid'" 0.4
	  echo "commit;"; } | cl_psql >"$E2E_TMP/a.out" 2>&1 &
	local a_job=$!
	wait_for "select count(*) from pg_locks where locktype = 'transactionid' and granted and pid <> pg_backend_pid()"
	c_pid=$(printf 'select pg_backend_pid();\nselect * from r for update skip locked;\n' | cl_psql | sed -n 1p)
	b_pid=$(printf 'select pg_backend_pid();\nselect * from r for update;\n' | cl_psql | sed -n 1p)
	wait "$a_job"
	a_pid=$(sed -n 1p "$E2E_TMP/a.out")
	sleep 0.5
	bt_stop

	# TIME PID REL MODE POLICY RESULT TIME_US CTID
	check_eq "pg$V: row-locks: A's lock" "$(awk -v p="$a_pid" '$2 == p { print $3, $4, $5, $6, $8 }' "$out")" \
		"$r_oid LockTupleExclusive LockWaitBlock TM_Ok (0,1)"
	check_eq "pg$V: row-locks: C's SKIP LOCKED" "$(awk -v p="$c_pid" '$2 == p { print $3, $4, $5, $6, $8 }' "$out")" \
		"$r_oid LockTupleExclusive LockWaitSkip TM_WouldBlock (0,1)"
	line=$(awk -v p="$b_pid" '$2 == p' "$out")
	check_eq "pg$V: row-locks: B's wait" "$(awk '{ print $3, $4, $5, $6, $8 }' <<<"$line")" \
		"$r_oid LockTupleExclusive LockWaitBlock TM_Ok (0,1)"
	check_near "pg$V: row-locks: B's wait in us" "$(awk '{ print $7 }' <<<"$line")" 425000 25000
	check_eq "pg$V: row-locks: only A, B and C" "$(awk '$1 ~ /^[0-9][0-9]:/ { print $2 }' "$out" | sort -u | paste -sd' ')" \
		"$(printf '%s\n' "$a_pid" "$b_pid" "$c_pid" | sort -u | paste -sd' ')"
}

for V in $PGBT_E2E_VERSIONS; do
	cluster_start "$V"
	test_row_locks
	test_lwlocks
	cluster_stop
done
e2e_done

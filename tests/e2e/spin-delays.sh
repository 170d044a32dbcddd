#!/usr/bin/env bash
# spin-delays under bpftrace against real servers (every server build,
# bpftrace versions in turn), with contention made on purpose: the test sets
# the BM_LOCKED bit (the buffer header spinlock) of the shared buffer that
# holds block 0 of table s, through /proc/PID/mem, for 300 ms. A backend
# that reads s must spin and sleep in WaitBufHdrUnlocked until the bit is
# cleared. The addresses come from pgbt-gen itself (a helper template).
set -euo pipefail
source "$(dirname "$0")/../lib/e2e.sh"

# Helper template: the address of the BufferDescriptors pointer and the
# layout of a buffer header, for this server.
mkdir -p "$E2E_TMP/tpl"
cat >"$E2E_TMP/tpl/bufhdr.bt" <<'EOF'
/*
 * bufhdr	Test helper: where the shared buffer headers are.
 */
{{ &BufferDescriptors }} {{ sizeof(BufferDescPadded) }} {{ offsetof(BufferDesc, state) }} {{if major >= 16}}{{ offsetof(BufferDesc, tag.relNumber) }}{{else}}{{ offsetof(BufferDesc, tag.rnode.relNode) }}{{end}} {{ offsetof(BufferDesc, tag.blockNum) }}
EOF

# bufhdr_lock PID ADDR STRIDE STATE_OFF REL_OFF BLOCK_OFF NBUFFERS RELFILENODE lock|unlock
# Finds the buffer of block 0 of RELFILENODE and sets or clears BM_LOCKED.
bufhdr_lock() {
	python3 - "$@" <<'EOF'
import struct, sys
pid, addr, stride, st, rel, blk, n, relfile, op = sys.argv[1:]
addr, stride, st, rel, blk, n, relfile = (int(x, 0) for x in (addr, stride, st, rel, blk, n, relfile))
BM_LOCKED = 1 << 22
with open(f"/proc/{pid}/mem", "r+b", buffering=0) as m:
    m.seek(addr)
    base = struct.unpack("<Q", m.read(8))[0]
    m.seek(base)
    descs = m.read(stride * n)
    for i in range(n):
        d = descs[i * stride:(i + 1) * stride]
        if struct.unpack_from("<I", d, rel)[0] == relfile and struct.unpack_from("<I", d, blk)[0] == 0:
            m.seek(base + i * stride + st)
            state = struct.unpack("<I", m.read(4))[0]
            state = state | BM_LOCKED if op == "lock" else state & ~BM_LOCKED
            m.seek(base + i * stride + st)
            m.write(struct.pack("<I", state))
            print(i)
            sys.exit(0)
sys.exit("no buffer holds block 0 of relfilenode %d" % relfile)
EOF
}

# "sleeping" when PID is in a timed sleep (pg_usleep: nanosleep or select).
spin_sleeping() {
	[[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) == S ]] &&
		grep -qE 'nanosleep|select|schedule_hrtimeout' "/proc/$1/stack" 2>/dev/null && echo sleeping
	return 0
}

for leg in $(e2e_legs_checked each); do
	leg_use "$leg" || continue
	cluster_start "$LEG_BUILD"
	cl_psql -c "create table s (a int); insert into s values (1); select * from s;" >/dev/null
	relfile=$(cl_psql -c "select pg_relation_filenode('s')")
	nbuf=$(cl_psql -c "select setting from pg_settings where name = 'shared_buffers'")
	read -r addr stride st rel blk < <("$PGBT_GEN" --scripts-dir "$E2E_TMP/tpl" -p "$CL_PID" bufhdr | grep -v '^//' | grep -v '^$' | tail -n1)
	"$PGBT_GEN" -p "$CL_PID" spin-delays >"$E2E_TMP/spin-delays.bt"
	bt_start "$E2E_TMP/spin-delays.bt" "$E2E_TMP/spin-delays.out"
	buf=$(bufhdr_lock "$CL_PID" "$addr" "$stride" "$st" "$rel" "$blk" "$nbuf" "$relfile" lock)
	cl_psql -c "select count(*) from s /* spin-reader */" >"$E2E_TMP/reader.out" 2>&1 &
	reader=$!
	# Contention confirmed before it is released: the reader, holding no
	# lock but wanting the buffer header, sleeps in its spin delay (the
	# kernel shows it asleep in a timed sleep; pg_stat_activity says
	# Timeout:SpinDelay only from 16 on), then 0.3 s more of backoff.
	rpid= state=
	for ((i = 0; i < 100; i++)); do
		rpid=$(cl_psql -c "select pid from pg_stat_activity
			where query like 'select count(*) from s /* spin-reader */%'")
		[[ -n $rpid ]] && state=$(spin_sleeping "$(cl_host_pid "$rpid")")
		[[ -n $state ]] && break
		sleep 0.05
	done
	check_eq "$LEG: the reader sleeps in its spin delay before the lock is released" "$state" sleeping
	sleep 0.3
	bufhdr_lock "$CL_PID" "$addr" "$stride" "$st" "$rel" "$blk" "$nbuf" "$relfile" unlock >/dev/null
	wait "$reader"
	check_eq "$LEG: the reader got its row once the header was unlocked" "$(cat "$E2E_TMP/reader.out")" 1
	sleep 0.3
	bt_stop
	out=$(cat "$E2E_TMP/spin-delays.out")
	get() { awk -v k="$1[WaitBufHdrUnlocked, " 'index($0, k) == 1 { s += $NF } END { print s + 0 }' <<<"$out"; }
	# The file, where the backend had its page mapped (else empty).
	# WaitBufHdrUnlocked's source file, where the backend had its page
	# mapped (else no line).
	line= file=
	line=$(sed -n 's/^@contended\[WaitBufHdrUnlocked, \([0-9]*\)\]: .*/\1/p' <<<"$out")
	file=$(sed -n "s/^@file\[$line\]: //p" <<<"$out")
	check_eq "$LEG: spin-delays: WaitBufHdrUnlocked's source file, if readable ($file)" \
		"${file##*/}" "$([[ -n $file ]] && echo bufmgr.c)"
	# The reader's wait, at least: on 18 another backend of the cluster
	# sometimes waits on the same header too (seen in about one run of
	# four, both waits in the same millisecond), so more is no error.
	cw=$(get @contended)
	check_eq "$LEG: spin-delays: the reader's contended wait in WaitBufHdrUnlocked, at least ($cw, buffer $buf)" \
		"$((cw >= 1))" 1
	# ~300 ms of backoff: sleeps of 1 ms growing by a random factor of
	# x1-x2 each time (s_lock.c), so the count is a range, not a number.
	sl=$(get @sleeps)
	check_eq "$LEG: spin-delays: WaitBufHdrUnlocked slept 3-60 times ($sl)" "$((sl >= 3 && sl <= 60))" 1
	sp=$(get @spins)
	check_eq "$LEG: spin-delays: spun at least 10 times per sleep ($sp)" "$((sp >= 10 * sl))" 1
	cluster_stop
done
e2e_done

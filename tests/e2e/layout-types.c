/* Every type the built-in layouts describe, from a major's installed
 * server headers (postgresql-server-dev-N), so that `pgbt-gen
 * check-layouts` can compare the layout with the DWARF of this file,
 * compiled with -g, where no debug build of that major can be had
 * (tests/e2e/resolution.sh). A variable of each type keeps the type in
 * the DWARF; nothing here runs. */
#include "postgres.h"

#include "access/htup.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecord.h"
#include "executor/instrument.h"
#include "lib/ilist.h"
#include "libpq/libpq-be.h"
#include "miscadmin.h"
#include "nodes/lockoptions.h"
#include "nodes/primnodes.h"
#include "storage/buf_internals.h"
#include "storage/itemptr.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/s_lock.h"
#include "storage/smgr.h"
#include "storage/sync.h"
#include "tcop/cmdtag.h"
#include "utils/rel.h"
#include "utils/timeout.h"
#if PG_VERSION_NUM >= 140000
#include "utils/backend_status.h"
#include "utils/wait_event.h"
#else
#include "pgstat.h"    /* 13: the status entry and wait events are here */
#endif

/* how pgbt-gen tells the major, as in the server binary */
__attribute__((used)) const char pgbt_version[] = PG_VERSION_STR;

/* the global the layouts name, with its type */
#if PG_VERSION_NUM >= 170000
TransamVariablesData *TransamVariables;
#else
VariableCacheData *ShmemVariableCache;
#endif
PROC_HDR *ProcGlobal;

BufferDesc pgbt_BufferDesc;
BufferDescPadded pgbt_BufferDescPadded;
BufferUsage pgbt_BufferUsage;
CheckpointStatsData pgbt_CheckpointStatsData;
XLogRecData pgbt_XLogRecData;
XLogRecord pgbt_XLogRecord;
HeapTupleData pgbt_HeapTupleData;
FileTag pgbt_FileTag;
ItemPointerData pgbt_ItemPointerData;
LOCALLOCK pgbt_LOCALLOCK;
LOCK pgbt_LOCK;
LOCKTAG pgbt_LOCKTAG;
LWLock pgbt_LWLock;
PGPROC pgbt_PGPROC;
PROCLOCK pgbt_PROCLOCK;
PROC_HDR pgbt_PROC_HDR;
QueryCompletion pgbt_QueryCompletion;
PgBackendStatus pgbt_PgBackendStatus;
Port pgbt_Port;
RangeVar pgbt_RangeVar;
RelationData pgbt_RelationData;
SMgrRelationData pgbt_SMgrRelationData;
SpinDelayStatus pgbt_SpinDelayStatus;
WalUsage pgbt_WalUsage;
dlist_node pgbt_dlist_node;
FullTransactionId pgbt_FullTransactionId;

BackendState pgbt_BackendState;
BackendType pgbt_BackendType;
BuiltinTrancheIds pgbt_BuiltinTrancheIds;
DeadLockState pgbt_DeadLockState;
ForkNumber pgbt_ForkNumber;
LockAcquireResult pgbt_LockAcquireResult;
TimeoutId pgbt_TimeoutId;
LWLockMode pgbt_LWLockMode;
LockTagType pgbt_LockTagType;
LockTupleMode pgbt_LockTupleMode;
LockWaitPolicy pgbt_LockWaitPolicy;
TM_Result pgbt_TM_Result;
WaitEventActivity pgbt_WaitEventActivity;
#if PG_VERSION_NUM >= 170000    /* an enum of its own from 17 on */
WaitEventBufferPin pgbt_WaitEventBufferPin;
#endif
WaitEventClient pgbt_WaitEventClient;
WaitEventIO pgbt_WaitEventIO;
WaitEventIPC pgbt_WaitEventIPC;
WaitEventTimeout pgbt_WaitEventTimeout;

int
main(void)
{
	return 0;
}

package io.strata.worker.ufs;

import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.StrataException;
import io.strata.common.net.WorkerAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the master about a corrupt copy this worker found (its own while persisting, a peer's while
 * copying from it), so the master drops it from the block's locations and no later read, copy or persist
 * is sent to it. A report that cannot be delivered is logged, never thrown: the caller's own failure is
 * what it reports, and a client's verified read reports the same copy again.
 *
 * <p>Stateless; call from a worker executor thread (one blocking RPC), never holding a lock.
 */
final class CorruptReports {
  private static final Logger LOG = LoggerFactory.getLogger(CorruptReports.class);

  private CorruptReports() {}

  static void report(MasterClient master, long blockId, WorkerAddress holder, CorruptBlockException e) {
    try {
      boolean dropped = master.reportCorrupt(blockId, holder, e.offset(), e.getMessage());
      LOG.warn("Block {} on worker {} is corrupt at offset {}; reported to the master, which {} the copy",
          blockId, holder, e.offset(), dropped ? "dropped" : "kept (no other source holds its bytes)");
    } catch (StrataException | RuntimeException r) {
      LOG.warn("Block {} on worker {} is corrupt at offset {}; reporting it to the master failed: {}", blockId,
          holder, e.offset(), r.getMessage());
    }
  }
}

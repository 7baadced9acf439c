package io.strata.worker;

import io.strata.worker.store.BlockStore;
import io.strata.worker.store.Lanes;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The removals the master asks for in heartbeat replies, and their bookkeeping, for {@link MasterSync}. They run on
 * lanes, one thread per storage dir ({@link Lanes}), never on the heartbeat thread: an unlink on a dying disk may hang,
 * and heartbeats must go on meanwhile, or the master declares this worker lost; such a disk holds up only its own
 * dir's removals. One removal per block is queued or running at a time (the master asks every beat until it hears the
 * block removed), so the queue holds at most the blocks the master asked for. A commit of the block, or the block
 * leaving the store otherwise, before a queued removal runs makes it moot: it is skipped, and the master asks again if
 * it still wants the block gone. Which blocks are being removed is kept too, so that a copy whose removal is under way
 * is not announced again.
 *
 * <p>Threading: no lock of its own. Its bookkeeping is guarded by the monitor of the {@link MasterSync} that owns it
 * ({@code lock}), so that what MasterSync decides under that monitor (a reply's removal skipped because a commit
 * overlapped the beat, a commit superseding a removal, a removal event queued) and this bookkeeping change in one
 * step. Methods marked "Monitor held" are called with that monitor held; {@link #start}, {@link #queued} and
 * {@link #close} without it. A removal, on its lane thread, takes the monitor only around the bookkeeping, never across
 * the store's removal. The lock order is MasterSync's (its monitor is a leaf): nothing else is taken under it here.
 */
final class MasterOrderedRemovals {
  private static final Logger LOG = LoggerFactory.getLogger(MasterOrderedRemovals.class);

  /** MasterSync's monitor, which guards the fields below. */
  private final Object lock;
  private final Supplier<BlockStore> store;
  /** Told a block the master asked for is gone already: the next heartbeat reports it, and the master stops asking. */
  private final LongConsumer alreadyGone;
  /** Blocks whose removal the master asked for and that are not gone yet (a reader may delay it). */
  private final Set<Long> removing = new HashSet<>();
  /**
   * The removals queued or running on {@link #lanes}, by block: true while still to run, false once moot (a commit of
   * the block, or its removal by other means, came first). One per block, so at most as many as the blocks the master
   * asked for.
   */
  private final Map<Long, Boolean> tasks = new HashMap<>();
  /** Runs the removals, one at a time per storage dir; shut down by {@link #close}. */
  private final Lanes lanes;

  /** {@code lock} is the owning MasterSync; {@code threadName} prefixes the lanes' thread names. */
  MasterOrderedRemovals(Object lock, String threadName, Supplier<BlockStore> store, LongConsumer alreadyGone) {
    this.lock = lock;
    this.store = store;
    this.alreadyGone = alreadyGone;
    this.lanes = new Lanes(threadName);
  }

  /** Whether the master asked for the block's removal and it is not gone yet. Monitor held. */
  boolean removing(long blockId) {
    return removing.contains(blockId);
  }

  /**
   * The master asks for the block's removal: true when a removal must be started ({@link #start}, after the monitor is
   * let go), false when one is queued or running already (a moot one still queued is wanted again). Monitor held.
   */
  boolean ask(long blockId) {
    removing.add(blockId);
    return tasks.put(blockId, true) == null;
  }

  /** Queues the removal {@link #ask} said to start, on the lane of the block's dir. Without the monitor. */
  void start(long blockId) {
    try {
      lanes.execute(store.get().dirOfBlock(blockId), () -> run(blockId));
    } catch (RejectedExecutionException closing) {
      synchronized (lock) {
        tasks.remove(blockId);
        removing.remove(blockId);
      }
    }
  }

  /** A new copy of the block is committed: a removal that has not run yet is moot. Monitor held. */
  void supersede(long blockId) {
    if (tasks.replace(blockId, false) != null) {
      removing.remove(blockId);
    }
  }

  /** The block left the store: a removal still queued has nothing left to remove. Monitor held. */
  void gone(long blockId) {
    removing.remove(blockId);
    tasks.replace(blockId, false);
  }

  /**
   * Removes a block the master asked for, on its lane; a removal made moot since it was queued (a commit of the block,
   * or the block gone by other means) is skipped.
   */
  private void run(long id) {
    synchronized (lock) {
      if (!Boolean.TRUE.equals(tasks.get(id))) {
        tasks.remove(id);
        return;
      }
    }
    try {
      if (!store.get().remove(id)) {
        alreadyGone.accept(id); // already gone: confirm, so the master stops asking
      }
    } catch (java.io.IOException | RuntimeException e) {
      synchronized (lock) {
        removing.remove(id);
      }
      LOG.warn("Cannot remove block {}: {}", id, e.toString());
    } finally {
      synchronized (lock) {
        tasks.remove(id);
      }
    }
  }

  /** Removals queued or running now (tests). */
  int queued() {
    synchronized (lock) {
      return tasks.size();
    }
  }

  /** Stops the lanes (a removal under way finishes on its own; queued ones are dropped). */
  void close() {
    lanes.close();
  }
}

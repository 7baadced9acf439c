package io.strata.worker.store;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes a storage dir out of service after a failure (after Kafka KIP-112): an I/O error that a
 * {@link DirProbe} confirms (or a dir whose layout is gone) marks it bad; its committed blocks leave the
 * index and are reported lost ({@link StoreEvents#dirFailed}), its writers are aborted and their ids freed,
 * and nothing new goes there. When no good dir is left, {@link StoreEvents#allDirsFailed} is raised, once.
 *
 * <p>Thread-safe. The probe, closing the doomed writers' channels and the events run outside the store's
 * monitor ({@link BlockIndex#lock}); the index changes run under it.
 */
final class DirFailures {
  private static final Logger LOG = LoggerFactory.getLogger(DirFailures.class);

  private final BlockIndex index;
  private final BlockAnnotator annotator;
  private final StoreEvents events;
  /** Store monitor. */
  private boolean allFailedRaised;

  DirFailures(BlockIndex index, BlockAnnotator annotator, StoreEvents events) {
    this.index = index;
    this.annotator = annotator;
    this.events = events;
  }

  /**
   * Marks a dir bad after an I/O error ({@code cause}; null when the health check found its layout gone)
   * if {@link DirProbe} confirms it: its blocks are lost, nothing new goes there. A transient error (out
   * of descriptors or space, an interrupt) or one a probe finds the dir healthy after leaves it in
   * service. Returns whether the dir is bad now.
   */
  boolean dirFailed(StorageDir dir, Exception cause) {
    if (!dir.isGood()) {
      return true;
    }
    if (!DirProbe.confirmsFailure(dir, cause)) {
      LOG.warn("I/O error in storage dir {} (tier {}), which stays in service (transient, or a probe found it "
          + "healthy): {}", dir.root, dir.tierAlias, cause == null ? "none" : cause.toString());
      return false;
    }
    List<Long> lost;
    List<Temp> doomed = new ArrayList<>();
    boolean allBad;
    synchronized (index.lock) {
      if (!dir.isGood()) {
        return true;
      }
      dir.markBad();
      lost = new ArrayList<>(dir.blocks.keySet());
      for (long id : lost) {
        index.committed.remove(id);
        index.pinned.remove(id);
        index.evictable.remove(id);
        index.removeWhenUnlocked.remove(id);
      }
      dir.lostBlocks = lost.size();
      dir.blocks.clear();
      dir.used = 0;
      // Its writers are done for (their appends and commits fail), and their ids are free at once: the
      // client retries the block, which must find a good dir here rather than "being written" forever.
      for (var it = index.writing.values().iterator(); it.hasNext(); ) {
        Temp t = it.next();
        if (t != null && t.dir == dir) {
          t.abortedBecause = "its dir " + dir.root + " failed";
          t.closed = true;
          it.remove();
          doomed.add(t);
        }
      }
      allBad = index.allDirs.stream().noneMatch(StorageDir::isGood);
      if (allBad && allFailedRaised) {
        allBad = false;
      }
      allFailedRaised |= allBad;
    }
    for (long id : lost) {
      annotator.onRemove(id);
    }
    for (Temp t : doomed) {
      try {
        t.channel.close(); // abort() skips a closed temp, so nothing else would
      } catch (IOException ignored) {
        // the dir is gone already
      }
    }
    LOG.error("Storage dir {} (tier {}) failed and is out of service; {} blocks lost: {}", dir.root, dir.tierAlias,
        lost.size(), cause == null ? "its layout is gone" : cause.toString());
    events.dirFailed(dir.path(), lost);
    if (allBad) {
      LOG.error("Every storage dir has failed: this worker cannot serve");
      events.allDirsFailed();
    }
    return true;
  }
}

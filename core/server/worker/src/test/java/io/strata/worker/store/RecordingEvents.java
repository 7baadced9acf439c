package io.strata.worker.store;

import java.util.ArrayList;
import java.util.List;

/**
 * {@link StoreEvents} that remember what the store said, in order, so tests can check every move, removal
 * and failure the worker would pass on to the master. Thread-safe: every method is synchronized.
 */
final class RecordingEvents implements StoreEvents {
  /** One {@link StoreEvents#blockMoved} call. */
  record Moved(long blockId, long length, String tier) {}

  /** One {@link StoreEvents#dirFailed} call. */
  record DirFailed(String path, List<Long> lostBlocks) {}

  private final List<Long> removed = new ArrayList<>();
  private final List<Moved> moved = new ArrayList<>();
  private final List<DirFailed> failed = new ArrayList<>();
  private int allDirsFailed;

  @Override
  public synchronized void blockRemoved(long blockId) {
    removed.add(blockId);
  }

  @Override
  public synchronized void blockMoved(long blockId, long length, String tier) {
    moved.add(new Moved(blockId, length, tier));
  }

  @Override
  public synchronized void dirFailed(String path, List<Long> lostBlocks) {
    failed.add(new DirFailed(path, List.copyOf(lostBlocks)));
  }

  @Override
  public synchronized void allDirsFailed() {
    allDirsFailed++;
  }

  synchronized List<Long> removed() {
    return List.copyOf(removed);
  }

  synchronized List<Moved> moved() {
    return List.copyOf(moved);
  }

  synchronized List<DirFailed> dirFailures() {
    return List.copyOf(failed);
  }

  synchronized int allDirsFailedCount() {
    return allDirsFailed;
  }

  /** Forgets what was recorded so far: a test's setup writes are not what it checks. */
  synchronized void clear() {
    removed.clear();
    moved.clear();
    failed.clear();
    allDirsFailed = 0;
  }
}

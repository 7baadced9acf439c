package io.strata.worker.rpc;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The under file system file writes open on this worker (WriteUfsFile calls past their header), so the master's
 * word that a file's writer lost its lease (a heartbeat reply's {@code abandoned_file_ids}) ends that file's
 * writes, as it ends its block writes: a writer whose client still sends keep-alives (alive, but cut off from the
 * master past the lease timeout) keeps no stream to a copy the master already deleted.
 *
 * <p>Thread-safe.
 */
final class UfsWrites {
  /** A write as this registry sees it. */
  interface Write {
    /** The file written. */
    long fileId();

    /** Ends the write (its partial file deleted); false when busy right now (asked again at the next reply). */
    boolean abandon();
  }

  private final Set<Write> open = ConcurrentHashMap.newKeySet();

  /** Adds an open write; the returned action removes it (the write calls it when it ends). */
  Runnable add(Write w) {
    open.add(w);
    return () -> open.remove(w);
  }

  /** Ends the open writes of {@code fileIds}; returns how many ended now. */
  int abortWritesOf(Collection<Long> fileIds) {
    Set<Long> ids = new HashSet<>(fileIds);
    int n = 0;
    for (Write w : open) {
      if (ids.contains(w.fileId()) && w.abandon()) {
        open.remove(w);
        n++;
      }
    }
    return n;
  }

  /** Writes open now. */
  int size() {
    return open.size();
  }
}

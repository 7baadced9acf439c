package io.strata.master.file;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Files recorded PERSISTED in memory whose journal entry saying so may not be durable yet: a persist round's files
 * until the round's flush, a CACHE_THROUGH complete's until its flush. Until then only the master's memory says the
 * UFS holds such a file, and a master that crashed or was deposed before the flush comes back with it still to be
 * persisted (or incomplete): its cached blocks must not be let go of meanwhile. So whatever lets blocks go because
 * their file is persisted (releasing them to workers for eviction, {@code free}, unmount, dropping a corrupt copy)
 * asks {@link #persisted} instead of the file's state alone.
 *
 * <p>Thread-safe (a concurrent set; a leaf: no lock is taken while it is read or changed).
 */
final class PersistedUnflushed {
  private final Set<Long> ids = ConcurrentHashMap.newKeySet();

  /** Before the file is recorded PERSISTED in memory. */
  void add(long fileId) {
    ids.add(fileId);
  }

  /** Once its entry is durable, or when it was not recorded PERSISTED after all. */
  void remove(long fileId) {
    ids.remove(fileId);
  }

  /** Whether {@code f} is persisted and that is durable: its cached blocks may be let go of. */
  boolean persisted(FileInfo f) {
    return f != null && f.persisted() && !ids.contains(f.id());
  }

  /** Files waiting for their flush now (tests). */
  int size() {
    return ids.size();
  }
}

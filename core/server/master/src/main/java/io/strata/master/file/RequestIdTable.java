package io.strata.master.file;

import io.strata.master.journal.JournalEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The request ids of calls the master applied recently, with what answers them (the inode a create or
 * complete returned), so a retried call is answered as its first attempt was. Bounded three ways: at most
 * {@code perClientMax} ids per client (the oldest dropped first), at most {@code totalMax} in all (the oldest
 * of the client least recently recorded dropped first), and none older than {@code retention} (a client
 * silent that long is forgotten whole). The bounds apply by the entries' own times, so a master
 * replaying the journal drops exactly what the leader that wrote it dropped.
 *
 * <p>Filled from {@link JournalEntry.RequestDone} entries: by {@link IdempotentCalls} while it appends
 * them (under the tree's write lock), by replay, by a checkpoint's entries. Thread-safe: one monitor, a leaf
 * of the master's lock order (taken under the tree's lock, takes nothing).
 */
final class RequestIdTable {
  private final int perClientMax;
  private final int totalMax;
  private final long retentionMs;
  /** Per client, its ids in the order applied; clients in the order of their newest id (oldest first). */
  private final LinkedHashMap<String, LinkedHashMap<Long, JournalEntry.RequestDone>> byClient =
      new LinkedHashMap<>();
  private int size;

  RequestIdTable(int perClientMax, Duration retention) {
    this(perClientMax, Integer.MAX_VALUE, retention);
  }

  RequestIdTable(int perClientMax, int totalMax, Duration retention) {
    if (perClientMax < 1 || totalMax < 1) {
      throw new IllegalArgumentException("perClientMax and totalMax must be at least 1, got " + perClientMax
          + " and " + totalMax);
    }
    this.perClientMax = perClientMax;
    this.totalMax = totalMax;
    this.retentionMs = retention.toMillis();
  }

  /** Records an applied call, then drops what the bounds no longer allow. */
  synchronized void record(JournalEntry.RequestDone done) {
    // Removed and put back: the client moves to the end (clients stay in the order of their newest id).
    LinkedHashMap<Long, JournalEntry.RequestDone> ids = byClient.remove(done.clientId());
    if (ids == null) {
      ids = new LinkedHashMap<>();
    }
    byClient.put(done.clientId(), ids);
    if (ids.put(done.callId(), done) == null) {
      size++;
    }
    while (ids.size() > perClientMax) {
      Iterator<Long> it = ids.keySet().iterator();
      it.next();
      it.remove();
      size--;
    }
    while (size > totalMax) {
      Iterator<LinkedHashMap<Long, JournalEntry.RequestDone>> clients = byClient.values().iterator();
      LinkedHashMap<Long, JournalEntry.RequestDone> oldest = clients.next(); // never this one's last id: size > 1
      Iterator<Long> it = oldest.keySet().iterator();
      it.next();
      it.remove();
      size--;
      if (oldest.isEmpty()) {
        clients.remove();
      }
    }
    expire(done.timeMs());
  }

  /** The record of {@code id} if it is kept and younger than the retention at {@code nowMs}, else null. */
  synchronized JournalEntry.RequestDone lookup(RequestId id, long nowMs) {
    Map<Long, JournalEntry.RequestDone> ids = byClient.get(id.clientId());
    JournalEntry.RequestDone done = ids == null ? null : ids.get(id.callId());
    return done == null || nowMs - done.timeMs() > retentionMs ? null : done;
  }

  /** Drops ids older than the retention at {@code nowMs}; whole clients first (their newest is too old). */
  private void expire(long nowMs) {
    Iterator<LinkedHashMap<Long, JournalEntry.RequestDone>> clients = byClient.values().iterator();
    while (clients.hasNext()) {
      LinkedHashMap<Long, JournalEntry.RequestDone> ids = clients.next();
      Iterator<JournalEntry.RequestDone> it = ids.values().iterator();
      while (it.hasNext() && nowMs - it.next().timeMs() > retentionMs) {
        it.remove();
        size--;
      }
      if (!ids.isEmpty()) {
        // Clients are in the order of their newest id: the first one with a live id ends the sweep, so a
        // record costs O(1) amortized. A live client's stale older ids go when it is next recorded.
        return;
      }
      clients.remove();
    }
  }

  /** Ids kept now, in all. */
  synchronized int size() {
    return size;
  }

  /** Ids kept for one client. */
  synchronized int size(String clientId) {
    Map<Long, JournalEntry.RequestDone> ids = byClient.get(clientId);
    return ids == null ? 0 : ids.size();
  }

  /** The entries that rebuild this table (for a checkpoint), oldest client first. */
  synchronized List<JournalEntry> snapshotEntries() {
    List<JournalEntry> out = new ArrayList<>(size);
    for (LinkedHashMap<Long, JournalEntry.RequestDone> ids : byClient.values()) {
      out.addAll(ids.values());
    }
    return out;
  }
}

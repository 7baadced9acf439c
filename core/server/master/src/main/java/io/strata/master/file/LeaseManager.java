package io.strata.master.file;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Write leases, as HDFS's LeaseManager: every incomplete file is held by one writer (a client context,
 * named by its client id) that renews all its files with one call every so often. A holder whose last
 * renewal is older than the timeout has abandoned its files; {@link #expired} hands them to the master,
 * which recovers them (deletes them: nothing of an incomplete file was ever acknowledged or visible).
 *
 * <p>Leases live in memory only. A master that starts leading gives every incomplete file it does not
 * know a lease renewed at that moment ({@link #adopt}), so a writer that survives a failover keeps its
 * file by renewing (the renewal names its files) and an abandoned one is recovered a timeout after the
 * takeover. Expiry compares {@code now - renewed} with the timeout (no sum that could overflow), on the
 * {@link io.strata.common.time.ElapsedClock} the master gives it, which a step of the system clock does not move.
 *
 * <p>Thread-safe: this object's monitor guards everything; its own methods do no I/O and take no other lock.
 * {@link LeaseRecovery} holds the monitor across a renewal's look at its files and across a recovery's last
 * look at a lease and its delete (taking the tree's lock inside it; nothing under the tree's lock takes this
 * monitor): see the master's lock order in docs/ARCHITECTURE.md.
 */
final class LeaseManager {
  /** The holder of files created without a client id: each such file is its own holder. */
  private static final String ANONYMOUS = "";
  /** The holder of the files a master found incomplete when it started leading. */
  static final String ADOPTED = "(incomplete when this master started leading)";

  private static final class Holder {
    long renewedMs;
    final Set<Long> files = new HashSet<>();

    Holder(long renewedMs) {
      this.renewedMs = renewedMs;
    }
  }

  private volatile long timeoutMs = java.time.Duration.ofMinutes(5).toMillis();
  private final Map<String, Holder> holders = new HashMap<>();
  private final Map<Long, String> holderOf = new HashMap<>();

  void setTimeout(java.time.Duration timeout) {
    this.timeoutMs = timeout.toMillis();
  }

  java.time.Duration timeout() {
    return java.time.Duration.ofMillis(timeoutMs);
  }

  private static String holderName(String client, long fileId) {
    return client == null || client.isEmpty() ? ANONYMOUS + "(no client id) file " + fileId : client;
  }

  /** {@code client} now holds {@code fileId} (just created), renewed at {@code nowMs}. */
  synchronized void add(String client, long fileId, long nowMs) {
    String name = holderName(client, fileId);
    release(fileId);
    Holder h = holders.computeIfAbsent(name, n -> new Holder(nowMs));
    h.renewedMs = Math.max(h.renewedMs, nowMs);
    h.files.add(fileId);
    holderOf.put(fileId, name);
  }

  /**
   * Renews {@code client}'s lease and attaches {@code fileIds} (incomplete files the caller checked) to it:
   * files held by another holder move, since the writer that renews is the one alive.
   */
  synchronized void renew(String client, Collection<Long> fileIds, long nowMs) {
    for (long id : fileIds) {
      if (!client.equals(holderOf.get(id))) {
        release(id);
        holders.computeIfAbsent(client, n -> new Holder(nowMs)).files.add(id);
        holderOf.put(id, client);
      }
    }
    Holder h = holders.get(client);
    if (h != null) {
      h.renewedMs = Math.max(h.renewedMs, nowMs);
    }
  }

  /** Every file with a lease (the caller forgets those that completed or went away). */
  synchronized List<Long> files() {
    return new ArrayList<>(holderOf.keySet());
  }

  /** Gives every file of {@code incomplete} that has no holder a lease renewed at {@code nowMs}. */
  synchronized void adopt(Collection<Long> incomplete, long nowMs) {
    for (long id : incomplete) {
      if (!holderOf.containsKey(id)) {
        Holder h = holders.computeIfAbsent(ADOPTED, n -> new Holder(nowMs));
        h.files.add(id);
        holderOf.put(id, ADOPTED);
      }
    }
  }

  /** Forgets {@code fileId} (completed, deleted or recovered). */
  synchronized void release(long fileId) {
    String name = holderOf.remove(fileId);
    if (name == null) {
      return;
    }
    Holder h = holders.get(name);
    if (h != null) {
      h.files.remove(fileId);
      if (h.files.isEmpty()) {
        holders.remove(name);
      }
    }
  }

  /** The files of holders not renewed for the timeout, by holder. */
  synchronized Map<String, List<Long>> expired(long nowMs) {
    Map<String, List<Long>> out = new HashMap<>();
    for (Map.Entry<String, Holder> e : holders.entrySet()) {
      if (nowMs - e.getValue().renewedMs > timeoutMs) {
        out.put(e.getKey(), new ArrayList<>(e.getValue().files));
      }
    }
    return out;
  }

  /** Whether {@code holder} still holds {@code fileId} and was last renewed more than the timeout before {@code nowMs}. */
  synchronized boolean stillExpired(String holder, long fileId, long nowMs) {
    Holder h = holders.get(holder);
    return holder.equals(holderOf.get(fileId)) && h != null && nowMs - h.renewedMs > timeoutMs;
  }

  /** Files with a lease (tests and reports). */
  synchronized int size() {
    return holderOf.size();
  }
}

package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.master.journal.JournalEntry;
import io.strata.master.journal.JournalSink;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Makes the non-idempotent namespace calls (create, complete, rename, delete) safe to retry: a call that
 * names a {@link RequestId} and was already applied, here or by an earlier leader, is answered from the
 * {@link RequestIdTable} as its first attempt was, instead of running again (which would answer
 * ALREADY_EXISTS or NOT_FOUND).
 *
 * <p>How the id reaches the journal: this is the tree's {@link JournalSink}. While {@link #run} runs a
 * call on a thread, the first operation that thread appends containing the call's own entry (its
 * {@code CreateFile} for that path, its {@code Rename} of that source, ...) gets a
 * {@link JournalEntry.RequestDone} as its last entry. So the id is durable exactly when the operation is
 * (one unit: replay applies both or neither), and the table is filled under the same tree write lock that
 * applies the change, so no reader sees the change without its id. Operations the call appends first (a
 * UFS load of a parent) are passed through unchanged.
 *
 * <p>Limit: a retry that arrives while its first attempt still runs on the same master (the client never
 * does this: it retries after the attempt failed) runs again and gets the plain answer.
 *
 * <p>Thread-safe: the pending call is thread-local; the table has its own monitor.
 */
final class IdempotentCalls implements JournalSink {
  private static final ThreadLocal<Pending> PENDING = new ThreadLocal<>();

  private final JournalSink journal;
  private final Clock clock;
  private volatile RequestIdTable table;

  IdempotentCalls(JournalSink journal, Clock clock, RequestIdTable table) {
    this.journal = journal;
    this.clock = clock;
    this.table = table;
  }

  /** A call of a thread that has not appended its own entry yet. */
  private static final class Pending {
    final RequestId id;
    final Predicate<JournalEntry> own;
    final ToLongFunction<JournalEntry> inode;
    boolean recorded;

    Pending(RequestId id, Predicate<JournalEntry> own, ToLongFunction<JournalEntry> inode) {
      this.id = id;
      this.own = own;
      this.inode = inode;
    }
  }

  /** The domain call, run on a first attempt. */
  @FunctionalInterface
  interface Call<T> {
    T call() throws StrataException;
  }

  /** The answer to a retry, from the first attempt's record. */
  @FunctionalInterface
  interface Answer<T> {
    T answer(JournalEntry.RequestDone first) throws StrataException;
  }

  /** Replaces the bounds (before the master replays or serves: the table starts empty). */
  void limits(int perClientMax, int totalMax, Duration retention) {
    table = new RequestIdTable(perClientMax, totalMax, retention);
  }

  RequestIdTable table() {
    return table;
  }

  /**
   * Runs {@code call}, or answers with {@code retry} when {@code id} was applied already. {@code own} picks
   * the call's own journal entry; {@code inode} the inode it answers with (0 if none). A null id runs
   * the call unprotected.
   */
  <T> T run(RequestId id, Predicate<JournalEntry> own, ToLongFunction<JournalEntry> inode, Call<T> call,
      Answer<T> retry) throws StrataException {
    if (id == null) {
      return call.call();
    }
    JournalEntry.RequestDone first = table.lookup(id, clock.millis());
    if (first != null) {
      return retry.answer(first);
    }
    Pending outer = PENDING.get();
    PENDING.set(new Pending(id, own, inode));
    try {
      return call.call();
    } finally {
      PENDING.set(outer);
    }
  }

  /**
   * Whether {@code e} is part of loading a file the call found in the UFS (created complete in one operation: its
   * CreateFile and its CompleteFile), never the call's own create or complete: a create of a path the UFS holds
   * loads it and then fails.
   */
  private static boolean loadedFromUfs(List<JournalEntry> operation, JournalEntry e) {
    long id;
    if (e instanceof JournalEntry.CreateFile c) {
      id = c.id();
    } else if (e instanceof JournalEntry.CompleteFile c) {
      id = c.id();
    } else {
      return false;
    }
    boolean created = false;
    boolean completed = false;
    for (JournalEntry other : operation) {
      created |= other instanceof JournalEntry.CreateFile c && c.id() == id;
      completed |= other instanceof JournalEntry.CompleteFile c && c.id() == id;
    }
    return created && completed;
  }

  @Override
  public void append(List<JournalEntry> operation) {
    Pending p = PENDING.get();
    if (p != null && !p.recorded) {
      for (JournalEntry e : operation) {
        if (p.own.test(e) && !loadedFromUfs(operation, e)) {
          JournalEntry.RequestDone done = new JournalEntry.RequestDone(p.id.clientId(), p.id.callId(),
              p.inode.applyAsLong(e), clock.millis());
          List<JournalEntry> with = new ArrayList<>(operation.size() + 1);
          with.addAll(operation);
          with.add(done);
          journal.append(with);
          table.record(done);
          p.recorded = true;
          return;
        }
      }
    }
    journal.append(operation);
  }
}

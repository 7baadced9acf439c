package io.strata.master.file;

import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.master.journal.JournalEntry;
import java.util.function.Predicate;

/**
 * The non-idempotent namespace calls (create, complete, delete, rename) when they name a {@link RequestId}:
 * for each kind, which journal entry is the call's own (so {@link IdempotentCalls} records the id with it)
 * and how a retry of a call already applied, here or by an earlier leader, is answered: as its first
 * attempt was, from the file as it is now, instead of ALREADY_EXISTS or NOT_FOUND. The caller passes the
 * call itself, run on a first attempt.
 *
 * <p>Thread-safe and stateless: the ids live in {@link IdempotentCalls}' table; a retry's answer waits for
 * the journal (outside every lock) and then reads the tree.
 */
final class NamespaceRetries {
  /** A namespace change that answers nothing (delete, rename). */
  @FunctionalInterface
  interface Change {
    void apply() throws StrataException;
  }

  private final IdempotentCalls calls;
  private final LeaseRecovery leases;
  private final InodeTree tree;
  private final MountTable mounts;
  private final MountOperations.Flush flush;

  NamespaceRetries(IdempotentCalls calls, LeaseRecovery leases, InodeTree tree, MountTable mounts,
      MountOperations.Flush flush) {
    this.calls = calls;
    this.leases = leases;
    this.tree = tree;
    this.mounts = mounts;
    this.flush = flush;
  }

  /** Creates a file at {@code path} once per request id; a retry also gives {@code clientId} its lease back. */
  FileInfo create(String path, String clientId, RequestId id, IdempotentCalls.Call<FileInfo> create)
      throws StrataException {
    return calls.run(id, e -> e instanceof JournalEntry.CreateFile c && c.path().equals(path),
        e -> ((JournalEntry.CreateFile) e).id(), create, first -> {
          FileInfo f = answerOf(first, path, "created");
          if (!f.complete()) {
            leases.created(clientId, f.id()); // a new leader learns the writer's lease here
          }
          return f;
        });
  }

  /** Completes the file at {@code path} once per request id. */
  FileInfo complete(String path, RequestId id, IdempotentCalls.Call<FileInfo> complete) throws StrataException {
    return calls.run(id, e -> e instanceof JournalEntry.CompleteFile, e -> ((JournalEntry.CompleteFile) e).id(),
        complete, first -> answerOf(first, path, "completed"));
  }

  /** {@link #complete} applied but not flushed (see {@link FileCompletion#apply}), for a batch of completes. */
  FileCompletion.Applied completeApplied(String path, RequestId id, IdempotentCalls.Call<FileCompletion.Applied> apply)
      throws StrataException {
    return calls.run(id, e -> e instanceof JournalEntry.CompleteFile, e -> ((JournalEntry.CompleteFile) e).id(),
        apply, first -> new FileCompletion.Applied(answerOf(first, path, "completed"), false));
  }

  /** Deletes {@code path} once per request id. */
  void delete(String path, RequestId id, Change delete) throws StrataException {
    apply(id, e -> e instanceof JournalEntry.Delete d && d.path().equals(path), delete);
  }

  /** Renames {@code src} to {@code dst} once per request id. */
  void rename(String src, String dst, RequestId id, Change rename) throws StrataException {
    apply(id, e -> e instanceof JournalEntry.Rename r && r.src().equals(src) && r.dst().equals(dst), rename);
  }

  /** A change answered with nothing: a retry waits for the first attempt's entries to be durable. */
  private void apply(RequestId id, Predicate<JournalEntry> own, Change change)
      throws StrataException {
    calls.run(id, own, e -> 0, () -> {
      change.apply();
      return null;
    }, first -> {
      flush.run();
      return null;
    });
  }

  /**
   * The file a retried create or complete answers with: as it is now (the first attempt's own reply is
   * not kept; its inode is). Waits for the first attempt's entries to be durable, as that attempt would.
   */
  private FileInfo answerOf(JournalEntry.RequestDone first, String path, String did) throws StrataException {
    flush.run();
    FileInfo f = tree.getFile(first.inodeId());
    if (f == null) {
      throw new NotFoundException("Cannot answer the retry of " + new RequestId(first.clientId(), first.callId())
          + ": the file it " + did + " at " + path + " (inode " + first.inodeId() + ") no longer exists");
    }
    return mounts.withUfs(f);
  }
}

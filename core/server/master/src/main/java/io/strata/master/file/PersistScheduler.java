package io.strata.master.file;

import io.strata.common.exception.StrataException;
import io.strata.common.path.StrataPath;
import io.strata.master.block.BlockMaster;
import io.strata.master.block.BlockState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.MasterReplies.PersistCommand;
import io.strata.master.file.MasterReplies.PersistResult;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UfsStatus;
import io.strata.server.ufs.UnderFileSystem;
import io.strata.common.time.Deadlines;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Persists ASYNC_THROUGH files: every complete TO_BE_PERSISTED file gets a job; a job sends a persist
 * command to the worker holding most of the file's blocks (delivered in that worker's next heartbeat),
 * or, for an empty file, writes the empty UFS file itself;
 * the worker writes the blocks in order to a temporary UFS name beside the final one and reports back;
 * the master renames it into place and journals PERSISTED with the UFS mtime. A failure, a lost worker or
 * a command unanswered for the timeout is retried with exponential backoff (from the minimum to the
 * maximum delay, without a limit on attempts: the data stays cached meanwhile). The in-flight state is not
 * journaled: after a restart the TO_BE_PERSISTED files are simply scheduled again. Files with blocks on a
 * worker whose writers wait for room are sent first, and once a file is PERSISTED its workers are told
 * they may evict its blocks ({@link BlockMaster#filePersisted}). A round reads the queue of files to persist in id
 * order, a batch of ids at a time ({@link WalkBatches}), never whole: a persist of a subtree of millions of files
 * queues millions, and a round holds state only for its jobs (at most the in-flight limit sent, plus those waiting
 * to be retried).
 *
 * <p>Threading: {@link #tick()} runs on one background thread and alone touches the jobs;
 * {@link #commandsFor} and {@link #report} are called from RPC threads and only touch the outbox (under
 * this object's monitor) and the result queue.
 */
final class PersistScheduler {
  private static final Logger LOG = LoggerFactory.getLogger(PersistScheduler.class);
  /** Most temporary copies of dropped jobs remembered for a late result (the oldest are deleted once more and let go). */
  static final int ABANDONED_MAX = 10_000;

  private static final class Job {
    long attempts;
    long nextAttemptMs;
    long workerId = -1;
    long sentAtMs;
    String tempUri;
    MountTable.Resolution target;
    /**
     * Every temporary copy handed out for the file, with the worker asked to write it: a result of an attempt given up
     * on (timed out, resent) that comes in later is still this file's copy, written whole, and is placed instead of
     * waiting for the attempt sent since (which that worker, still busy with the first, may never start).
     */
    final Map<String, Long> temps = new HashMap<>();
  }

  /** A temporary copy of a job dropped while an attempt could still write it, to delete when it turns up. */
  private record Abandoned(MountTable.Resolution target, long sinceMs) {}

  /**
   * The temporary copies of jobs dropped (their file deleted, or persisted another way) while a worker could still be
   * writing them, by URI: deleted when the job is dropped, again when the worker's late result names one (it finished
   * the copy after that delete, or began it after), and once more a persist timeout later, then let go. Tick thread.
   */
  private final Map<String, Abandoned> abandoned = new java.util.LinkedHashMap<>();
  private final InodeTree tree;
  private final BlockMaster blocks;
  private final MountTable mounts;
  private final MetadataSync ufs;
  private final Function<FileInfo, List<BlockState>> blocksOf;
  /** Flushes the journal: true once what the round changed is durable. */
  private final java.util.function.BooleanSupplier durable;
  /** Files made PERSISTED since the last successful flush: their blocks are released to eviction after it. */
  private final List<Long> persistedUnflushed = new ArrayList<>();
  private final Clock clock;
  private final UfsConfig conf;
  private final Map<Long, Job> jobs = new HashMap<>();
  private final Map<Long, List<PersistCommand>> outbox = new HashMap<>();
  /** How many ids of the persist queue a round reads at a time. */
  private final WalkBatches batches;
  /** Reported outcomes with the worker that reported each. */
  private final ConcurrentLinkedQueue<Reported> results = new ConcurrentLinkedQueue<>();

  private record Reported(long workerId, PersistResult result) {}
  /** The round journaled something; it flushes once at its end. Touched by the tick thread only. */
  private boolean changed;
  /** Jobs after the last round (read by the metrics from other threads). */
  private volatile int pendingAfterRound;
  private final java.util.concurrent.atomic.LongAdder failures = new java.util.concurrent.atomic.LongAdder();

  /**
   * Held (never waited for: the tick thread tries again next round) on a file's path from the last check that it is
   * still there until it is PERSISTED: no delete or rename of a related path, which could bring another file's UFS
   * copy to that path, comes between the check and the clearing and renaming there.
   */
  private final PathGuard guard;
  /** Files this scheduler recorded PERSISTED whose entries the round's flush has not made durable yet. */
  private final PersistedUnflushed unflushed;

  PersistScheduler(InodeTree tree, BlockMaster blocks, MountTable mounts, MetadataSync ufs,
      Function<FileInfo, List<BlockState>> blocksOf, java.util.function.BooleanSupplier durable, Clock clock,
      UfsConfig conf, PathGuard guard, PersistedUnflushed unflushed, WalkBatches batches) {
    this.batches = batches;
    this.guard = guard;
    this.unflushed = unflushed;
    this.tree = tree;
    this.blocks = blocks;
    this.mounts = mounts;
    this.ufs = ufs;
    this.blocksOf = blocksOf;
    this.durable = durable;
    this.clock = clock;
    this.conf = conf;
  }

  /** The commands waiting for this worker; they are handed out once. */
  synchronized List<PersistCommand> commandsFor(long workerId) {
    List<PersistCommand> out = outbox.remove(workerId);
    return out == null ? List.of() : out;
  }

  /** Outcomes reported by worker {@code workerId}; only those of commands sent to it count. */
  void report(long workerId, List<PersistResult> rs) {
    for (PersistResult r : rs) {
      results.add(new Reported(workerId, r));
    }
  }

  /**
   * One round: apply reported outcomes, retry what failed or timed out, send what is due (at most
   * {@link UfsConfig#persistMaxInFlight()} jobs at a time). The PERSISTED entries of the round are made
   * durable with one journal flush at its end: a crash before it only means those files are persisted
   * again. Only after that flush are the workers told they may evict those files' blocks: were they told
   * before, a master restarted from the journal would find the files TO_BE_PERSISTED with their only cached
   * copies evicted, and never read the UFS copy. A flush that fails keeps them for the next round's.
   */
  void tick() {
    try {
      round();
    } finally {
      pendingAfterRound = jobs.size();
      if (changed && durable.getAsBoolean()) {
        changed = false;
        for (long id : persistedUnflushed) {
          unflushed.remove(id);
          blocks.filePersisted(id); // the workers may evict its blocks now
        }
        persistedUnflushed.clear();
      }
    }
  }

  private void round() {
    long now = clock.millis();
    List<Reported> later = new ArrayList<>();
    for (Reported rep; (rep = results.poll()) != null; ) {
      PersistResult r = rep.result();
      Job job = jobs.get(r.fileId());
      String uri = r.ufsUri() == null ? "" : r.ufsUri();
      if (job == null) {
        Abandoned a = uri.isEmpty() ? null : abandoned.remove(uri);
        if (a != null && r.ok()) {
          deleteTemp(a.target(), uri, "a late copy of file " + r.fileId() + ", no longer to persist");
        }
        continue; // a late answer for a file no longer to persist
      }
      if (!uri.isEmpty() && (!uri.equals(job.tempUri) || job.workerId < 0)) {
        Long askedOf = job.temps.get(uri);
        if (askedOf == null || askedOf != rep.workerId()) {
          LOG.warn("Ignoring a persist result for file {} from worker {}: it names {}, not a copy asked of it",
              r.fileId(), rep.workerId(), uri);
          continue;
        }
        if (!r.ok()) {
          continue; // an earlier attempt failed: says nothing of the one under way
        }
        // An earlier attempt's copy (or the last one's, given up on meanwhile), written whole: placed now, rather than
        // waiting for an attempt sent since or to come.
        LOG.info("Persisting file {}: the copy of an earlier attempt ({}) is done; placing it", r.fileId(), uri);
        job.tempUri = uri;
        job.workerId = rep.workerId();
      } else if (job.workerId < 0) {
        continue; // a late answer to a command already given up on, that does not say which copy it wrote
      } else if (rep.workerId() != job.workerId) {
        LOG.warn("Ignoring a persist result for file {} from worker {}: the command went to worker {}",
            r.fileId(), rep.workerId(), job.workerId);
        continue;
      }
      if (r.ok()) {
        if (!finish(r.fileId(), job)) {
          later.add(rep); // a delete or rename of a related path is under way: placed next round
        }
      } else {
        fail(r.fileId(), job, "worker " + job.workerId + " failed: " + r.error(), now);
      }
    }
    results.addAll(later);
    // Of the files with a job, those still to persist: the queue itself is only read a batch at a time (below).
    Set<Long> wanted = tree.toPersistAmong(new ArrayList<>(jobs.keySet()));
    Set<Long> live = new HashSet<>();
    for (WorkerState w : blocks.liveWorkers()) {
      live.add(w.id());
    }
    synchronized (this) {
      outbox.keySet().retainAll(live); // a lost worker never collects them (back, it registers as a new id)
    }
    for (java.util.Iterator<Map.Entry<Long, Job>> it = jobs.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Long, Job> e = it.next();
      Job job = e.getValue();
      if (!wanted.contains(e.getKey()) && job.workerId < 0) {
        it.remove(); // deleted, or persisted another way
        abandon(job, now);
      } else if (job.workerId >= 0 && (!live.contains(job.workerId)
          || now - job.sentAtMs > conf.persistTimeout().toMillis())) {
        fail(e.getKey(), job, live.contains(job.workerId) ? "no answer from worker " + job.workerId + " within "
            + conf.persistTimeout() : "worker " + job.workerId + " was lost", now);
        if (!wanted.contains(e.getKey())) {
          it.remove();
          abandon(job, now);
        }
      }
    }
    for (java.util.Iterator<Map.Entry<String, Abandoned>> it = abandoned.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Abandoned> e = it.next();
      if (now - e.getValue().sinceMs() <= conf.persistTimeout().toMillis()) {
        break; // in the order dropped: the rest are younger
      }
      it.remove();
      deleteTemp(e.getValue().target(), e.getKey(), "a copy of a dropped persist job, a persist timeout on");
    }
    int inFlight = 0;
    for (Job job : jobs.values()) {
      if (job.workerId >= 0) {
        inFlight++;
      }
    }
    // The files with a block on a worker whose writers wait for room go first (persisting them is what lets that
    // worker evict their blocks: it never evicts blocks of files not yet persisted), then the rest; the queue is
    // read in id order, a batch of ids at a time, never whole.
    Set<Long> starved = blocks.workersAwaitingSpace();
    for (int pass = starved.isEmpty() ? 1 : 0; pass < 2 && inFlight < conf.persistMaxInFlight(); pass++) {
      long after = Long.MIN_VALUE;
      for (List<Long> ids; inFlight < conf.persistMaxInFlight()
          && !(ids = tree.filesToPersistAfter(after, batches.size())).isEmpty(); ) {
        after = ids.get(ids.size() - 1);
        batches.held(ids.size());
        for (long fileId : ids) {
          if (inFlight >= conf.persistMaxInFlight()) {
            break; // the rest wait for a later round
          }
          Job job = jobs.get(fileId);
          if ((job != null && (job.workerId >= 0 || now < job.nextAttemptMs))
              || (pass == 0 && !holdsBlockOn(fileId, starved))) {
            continue;
          }
          job = jobs.computeIfAbsent(fileId, id -> new Job());
          send(fileId, job, live, now);
          if (job.workerId >= 0) {
            inFlight++;
          }
        }
      }
    }
  }

  /** Whether a live copy of a block of file {@code fileId} is on one of {@code workers}. */
  private boolean holdsBlockOn(long fileId, Set<Long> workers) {
    FileInfo f = tree.getFile(fileId);
    if (f != null) {
      for (BlockState b : blocksOf.apply(f)) {
        for (BlockState.Location loc : b.locations()) {
          if (workers.contains(loc.worker().id())) {
            return true;
          }
        }
      }
    }
    return false;
  }


  private void send(long fileId, Job job, Set<Long> live, long now) {
    FileInfo f = tree.getFile(fileId);
    if (f == null || !f.complete()) {
      return;
    }
    MountTable.Resolution r;
    try {
      r = mounts.resolve(StrataPath.of(f.path()));
    } catch (StrataException e) {
      return;
    }
    if (r == null || r.mount().readOnly()) {
      fail(fileId, job, r == null ? "no under file system is mounted at " + f.path()
          : f.path() + " is under a read-only mount", now);
      return;
    }
    job.target = r;
    job.tempUri = UfsTempNames.tempUri(r.ufsUri(), f.name(), fileId);
    job.temps.put(job.tempUri, -1L); // the worker it is asked of is set below
    // The copy's directory is made here, and workers create the copy without parents: a persist racing a
    // delete of the file's directory then fails rather than bringing the directory back into the UFS
    // (where a listing would load it into Strata again).
    try {
      if (!UfsDirsCreated.mkdirsFor(ufs.client(r), UfsManager.parent(job.tempUri), () -> tree.isFileAt(fileId, f.path()))) {
        return; // deleted or moved while the directory was made
      }
    } catch (IOException e) {
      fail(fileId, job, "cannot create the directory of " + job.tempUri + ": " + e.getMessage(), now);
      return;
    }
    if (f.length() == 0) {
      // Nothing to copy: the master writes the empty file itself, no worker needed.
      try {
        ufs.client(r).createNonRecursive(job.tempUri).close();
      } catch (IOException e) {
        fail(fileId, job, "cannot create " + job.tempUri + ": " + e.getMessage(), now);
        return;
      }
      job.workerId = 0;
      if (!finish(fileId, job)) {
        job.workerId = -1; // a change of a related path holds the path: tried again next round, not a failure
      }
      return;
    }
    List<BlockState> bs = blocksOf.apply(f);
    Map<Long, Integer> held = new HashMap<>();
    for (BlockState b : bs) {
      if (b.locations().isEmpty()) {
        fail(fileId, job, "block " + b.blockId() + " of " + f.path() + " has no live copy", now);
        return;
      }
      for (BlockState.Location loc : b.locations()) {
        held.merge(loc.worker().id(), 1, Integer::sum);
      }
    }
    long worker = -1;
    int best = -1;
    for (Map.Entry<Long, Integer> e : held.entrySet()) {
      if (live.contains(e.getKey()) && e.getValue() > best) {
        best = e.getValue();
        worker = e.getKey();
      }
    }
    if (worker < 0) {
      fail(fileId, job, "no live worker holds the blocks of " + f.path(), now);
      return;
    }
    job.workerId = worker;
    job.temps.put(job.tempUri, worker);
    job.sentAtMs = now;
    synchronized (this) {
      outbox.computeIfAbsent(worker, w -> new ArrayList<>())
          .add(new PersistCommand(fileId, job.tempUri, r.mount().options(), bs));
    }
    LOG.debug("Persisting {} (file {}) through worker {}, attempt {}", f.path(), fileId, worker, job.attempts + 1);
  }

  /**
   * The worker wrote the temporary file: move it into place and record the file PERSISTED. False when a change of a
   * related path holds the file's path now: nothing was done, and the result is to be applied in a later round.
   */
  private boolean finish(long fileId, Job job) {
    long now = clock.millis();
    FileInfo f = tree.getFile(fileId);
    UnderFileSystem u;
    try {
      u = ufs.client(job.target);
    } catch (StrataException e) {
      fail(fileId, job, e.getMessage(), now);
      return true;
    }
    try {
      if (f == null || f.persistence() != PersistenceState.TO_BE_PERSISTED) {
        jobs.remove(fileId); // deleted or changed meanwhile: no copy of any attempt is wanted
        abandon(job, now);
        return true;
      }
      MountTable.Resolution now2 = mounts.resolve(StrataPath.of(f.path()));
      if (now2 == null || !now2.mount().path().equals(job.target.mount().path())) {
        u.delete(job.tempUri, false);
        fail(fileId, job, f.path() + " moved to another mount while it was persisted", now);
        return true;
      }
      String at = f.path();
      PathGuard.Held held = guard.tryHold(StrataPath.of(at));
      if (held == null) {
        return false;
      }
      try (held) {
        place(fileId, job, u, f, at, now2.ufsUri(), now);
      }
    } catch (IOException | RuntimeException e) {
      fail(fileId, job, "finishing the persistence failed: " + e.getMessage(), now);
    }
    return true;
  }

  /**
   * {@link #finish} with the file's path {@code at} held: checks the file is still there (so the UFS path {@code dst}
   * is its own to clear: a rename that brought another file's copy there has to wait for this), places the copy and
   * records it PERSISTED.
   */
  private void place(long fileId, Job job, UnderFileSystem u, FileInfo f, String at, String dst, long now)
      throws IOException {
    if (!tree.isFileAt(fileId, at)) {
      u.delete(job.tempUri, false);
      fail(fileId, job, at + " moved while it was persisted", now);
      return;
    }
    FileCompletion.replaceableTarget(u, dst, StrataPath.of(at));
    // The file's directory may have been renamed or deleted since its path was read: directories made
    // for a path it no longer has are removed again, or a listing would load them back into Strata.
    UfsDirsCreated made = UfsDirsCreated.mkdirs(u, UfsManager.parent(dst));
    if (!tree.isFileAt(fileId, at)) {
      made.undo();
      u.delete(job.tempUri, false);
      fail(fileId, job, at + " moved while it was persisted", now);
      return;
    }
    if (!u.rename(job.tempUri, dst)) {
      made.undo();
      fail(fileId, job, "cannot rename " + job.tempUri + " to " + dst, now);
      return;
    }
    UfsStatus s = u.getStatus(dst);
    if (s == null || s.length() != f.length()) {
      fail(fileId, job, dst + " has " + (s == null ? "no file" : s.length() + " bytes") + " after the rename, "
          + "expected " + f.length(), now);
      return;
    }
    // Under the tree's lock, so no rename or delete comes between this check and PERSISTED: the file must still
    // be where its copy was just placed (a rename in between moves nothing in the UFS for a file not yet
    // persisted, so PERSISTED at the new path would name a UFS location without its bytes).
    FileInfo done;
    unflushed.add(fileId); // before PERSISTED is seen in memory: nothing lets its blocks go until the flush
    try {
      done = tree.setFileAttribute(fileId, null, null, null, PersistenceState.PERSISTED, s.modificationTimeMs(),
          cur -> {
            if (cur.persistence() != PersistenceState.TO_BE_PERSISTED) {
              throw new io.strata.common.exception.FailedPreconditionException("no longer to be persisted");
            }
            if (!cur.path().equals(at)) {
              throw new MovedMeanwhile(at + " moved to " + cur.path() + " while its copy was placed at " + dst);
            }
          });
    } catch (MovedMeanwhile e) {
      unflushed.remove(fileId);
      dropPlacedCopy(u, dst, at, s);
      made.undo(); // dirs made for the old path, or a listing would load them back
      fail(fileId, job, e.getMessage(), now); // persisted again, at its new path
      return;
    } catch (StrataException | RuntimeException e) {
      unflushed.remove(fileId);
      fail(fileId, job, "finishing the persistence failed: " + e.getMessage(), now);
      return;
    }
    if (done == null) {
      unflushed.remove(fileId);
      dropPlacedCopy(u, dst, at, s); // deleted meanwhile: its copy must not come back at the next listing
      made.undo();
      jobs.remove(fileId);
      job.temps.remove(job.tempUri); // placed, then dropped above
      abandon(job, now);
      return;
    }
    changed = true;
    jobs.remove(fileId);
    persistedUnflushed.add(fileId);
    // The attempts given up on: their copies (whole, partial or never begun) are not wanted. Deleted now and watched,
    // as a dropped job's are: one a worker still writes appears later (an object store shows it only once closed),
    // and is deleted when its late result comes, or a persist timeout on.
    job.temps.remove(job.tempUri);
    abandon(job, now);
    LOG.debug("Persisted {} to {} ({} bytes)", f.path(), dst, f.length());
  }

  /** The file was renamed while its copy was placed at its old UFS location. */
  private static final class MovedMeanwhile extends io.strata.common.exception.FailedPreconditionException {
    private static final long serialVersionUID = 1L;

    MovedMeanwhile(String message) {
      super(message);
    }
  }

  /**
   * Deletes the copy just placed at {@code dst} for a file no longer at {@code at}: only when nothing is at
   * {@code at} in Strata now and {@code dst} is still that copy (its length and time), so the copy of a file made
   * at {@code at} since is never the one deleted. Best effort: a copy left behind is an unknown UFS file.
   */
  private void dropPlacedCopy(UnderFileSystem u, String dst, String at, UfsStatus placed) {
    try {
      UfsStatus there = u.getStatus(dst);
      if (there != null && !there.directory() && there.length() == placed.length()
          && there.modificationTimeMs() == placed.modificationTimeMs() && !tree.exists(StrataPath.of(at))) {
        u.delete(dst, false);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot remove {}, placed for a file no longer at {}: {}", dst, at, e.toString());
    }
  }

  /**
   * A dropped job's temporary copies: deleted now (whole, partial or not begun), and remembered so that one a worker
   * writes or finishes after this is deleted too (see {@link #abandoned}).
   */
  private void abandon(Job job, long now) {
    if (job.target == null) {
      return; // never sent
    }
    for (String temp : job.temps.keySet()) {
      deleteTemp(job.target, temp, "a copy of a dropped persist job");
      abandoned.remove(temp);
      abandoned.put(temp, new Abandoned(job.target, now));
    }
    if (abandoned.size() > ABANDONED_MAX) {
      LOG.warn("More than {} copies of dropped persist jobs to watch: no longer watching the oldest {} (deleted when "
          + "dropped; one written after that stays in the under file system)", ABANDONED_MAX,
          abandoned.size() - ABANDONED_MAX);
      for (java.util.Iterator<String> it = abandoned.keySet().iterator(); abandoned.size() > ABANDONED_MAX; ) {
        it.next();
        it.remove();
      }
    }
  }

  private void deleteTemp(MountTable.Resolution target, String uri, String what) {
    try {
      if (ufs.client(target).delete(uri, false)) {
        LOG.info("Deleted {}: {}", what, uri);
      }
    } catch (IOException e) {
      LOG.debug("Cannot delete {} ({}): {}", what, uri, e.toString());
    }
  }

  /** Workers with commands waiting to be collected (tests). */
  synchronized int outboxWorkers() {
    return outbox.size();
  }

  /** Temporary copies of dropped persist jobs still watched for (tests). */
  int abandonedCopies() {
    return abandoned.size();
  }

  private void fail(long fileId, Job job, String why, long now) {
    failures.increment();
    job.attempts++;
    job.workerId = -1;
    long min = conf.persistRetryMin().toMillis();
    long delay = Math.min(conf.persistRetryMax().toMillis(),
        Deadlines.saturatedMultiply(min, 1L << Math.min(20, job.attempts - 1)));
    job.nextAttemptMs = Deadlines.plusMillis(now, delay);
    LOG.warn("Persisting file {} failed (attempt {}): {}; retrying in {} ms", fileId, job.attempts, why, delay);
  }

  /** Files waiting to be persisted or being persisted, as of the last round (any thread). */
  int backlog() {
    return pendingAfterRound;
  }

  /** Persist attempts that failed so far (each is retried). */
  long failures() {
    return failures.sum();
  }

  /** Files with a job, sent or waiting (tests and reports). */
  int pending() {
    return jobs.size();
  }
}

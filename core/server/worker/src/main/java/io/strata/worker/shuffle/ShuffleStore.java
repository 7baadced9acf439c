package io.strata.worker.shuffle;

import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.id.BlockId;
import io.strata.common.net.WorkerAddress;
import io.strata.common.shuffle.BatchHeader;
import io.strata.worker.rpc.Committer;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.UfsOperations;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shuffle partition files this worker keeps, by file id: opened by the driver, appended by pushes,
 * sealed at stage end, dropped when the shuffle ends. Checks every input: the app id's characters (it
 * names a directory under {@code /.shuffle}), that a batch names a partition opened here under the same
 * app, shuffle and partition ids, its size and its CRC32C.
 *
 * <p>Thread-safe: the registry is a concurrent map; each {@link PartitionFile} locks itself. The files of one
 * seal request are sealed side by side on the {@code sealFiles} executor (each seal waits on master commits and
 * a UFS write, so one after another a stage end of a thousand partitions takes seconds); the caller waits for
 * them all.
 */
public final class ShuffleStore {
  /** A partition file to keep here; {@code replica} is null on a replica (or without one). */
  public record PartitionSpec(String appId, int shuffleId, int partitionId, long fileId, long blockSize,
      WorkerAddress replica) {}

  /**
   * One pushed batch. {@code data}'s position to limit are its bytes. {@code offset}: on a forwarded batch, where
   * its primary appended it (the replica appends it at the same place); -1 elsewhere (appended at the end).
   */
  public record Batch(int partitionId, long fileId, int mapIndex, long attemptId, int batchId, int length,
      int crc32c, ByteBuffer data, long offset) {
    public Batch(int partitionId, long fileId, int mapIndex, long attemptId, int batchId, int length, int crc32c,
        ByteBuffer data) {
      this(partitionId, fileId, mapIndex, attemptId, batchId, length, crc32c, data, -1);
    }

    /** This batch as appended at {@code at} on its primary: how it is forwarded. */
    Batch at(long at) {
      return new Batch(partitionId, fileId, mapIndex, attemptId, batchId, length, crc32c, data, at);
    }
  }

  /**
   * The outcome of sealing one partition copy: its length and CRC, or why it failed ({@code error}, null when
   * sealed); {@code committed} with an error: its blocks were committed before it failed, length and CRC are
   * theirs; {@code dropped} with an error: a copy sealed beside its primary's that no commit of reached the
   * master, dropped here.
   */
  public record Sealed(long fileId, long length, int crc32c, String error, boolean committed, boolean dropped) {
    static Sealed failed(long fileId, String error) {
      return new Sealed(fileId, -1, 0, error, false, false);
    }
  }

  private final BlockStore store;
  private final Committer committer;
  private final UfsOperations ufs;
  private final long maxBatchBytes;
  private final java.util.concurrent.Executor sealFiles;
  private final AppendBuffers buffers;
  private final Map<Long, PartitionFile> partitions = new ConcurrentHashMap<>();
  private final int partitionsMax;
  private final ParkingBudget parking;

  private final java.util.concurrent.atomic.LongAdder sealed = new java.util.concurrent.atomic.LongAdder();
  private final java.util.concurrent.atomic.LongAdder sealedBytes = new java.util.concurrent.atomic.LongAdder();
  private final java.util.concurrent.atomic.LongAdder sealFailures = new java.util.concurrent.atomic.LongAdder();

  /**
   * {@code sealFiles} runs the seal of each file of a seal request; it must not be the executor the requests
   * themselves run on (a request waits for its files' seals). {@code appendBufferMax}: the heap the partition files'
   * write-behind buffers may hold together ({@code strata.worker.shuffle.append.buffer.max}; 0: none).
   * {@code forwardAheadMax}: how far past a replica copy's end a forwarded batch may wait for those before it (more
   * than any primary has in flight); {@code parkedMax}: how many bytes of such waiting batches this worker holds
   * over all its copies together.
   */
  public ShuffleStore(BlockStore store, Committer committer, UfsOperations ufs, long maxBatchBytes,
      java.util.concurrent.Executor sealFiles, long appendBufferMax, long forwardAheadMax, long parkedMax) {
    this(store, committer, ufs, maxBatchBytes, sealFiles, appendBufferMax, forwardAheadMax, parkedMax,
        Integer.MAX_VALUE);
  }

  /** As above, with at most {@code partitionsMax} partition files open ({@code strata.worker.shuffle.partitions.max}). */
  public ShuffleStore(BlockStore store, Committer committer, UfsOperations ufs, long maxBatchBytes,
      java.util.concurrent.Executor sealFiles, long appendBufferMax, long forwardAheadMax, long parkedMax,
      int partitionsMax) {
    this.partitionsMax = partitionsMax;
    this.parking = new ParkingBudget(forwardAheadMax, parkedMax);
    this.store = store;
    this.committer = committer;
    this.ufs = ufs;
    this.maxBatchBytes = maxBatchBytes;
    this.sealFiles = sealFiles;
    this.buffers = new AppendBuffers(appendBufferMax);
  }

  private static void checkAppId(String appId) throws InvalidArgumentException {
    io.strata.common.shuffle.AppIds.check(appId);
  }

  /**
   * Opens partitions for pushes; one already open here with the same ids is left as it is. Refuses the whole request,
   * RESOURCE_EXHAUSTED with nothing opened, when the new ones would pass {@code partitionsMax} (concurrent requests
   * may together pass it by what they open at once).
   */
  public void open(List<PartitionSpec> specs) throws StrataException {
    long fresh = specs.stream().filter(s -> !partitions.containsKey(s.fileId())).count();
    if (fresh > 0 && partitions.size() + fresh > partitionsMax) {
      throw new io.strata.common.exception.ResourceExhaustedException("This worker holds " + partitions.size()
          + " shuffle partition files; " + fresh + " more would pass strata.worker.shuffle.partitions.max ("
          + partitionsMax + "): none of this request's were opened");
    }
    for (PartitionSpec s : specs) {
      checkAppId(s.appId());
      if (s.shuffleId() < 0 || s.partitionId() < 0) {
        throw new InvalidArgumentException("Bad shuffle partition: shuffle id " + s.shuffleId()
            + " and partition id " + s.partitionId() + " must not be negative");
      }
      if (!BlockId.isValid(BlockId.of(s.fileId(), 0)) || s.fileId() <= 0) {
        throw new InvalidArgumentException("Bad shuffle partition file id " + s.fileId());
      }
      if (s.blockSize() <= BatchHeader.BYTES) {
        throw new InvalidArgumentException("Bad block size " + s.blockSize() + " for shuffle partition file "
            + s.fileId());
      }
    }
    for (PartitionSpec s : specs) {
      PartitionFile had = partitions.putIfAbsent(s.fileId(), new PartitionFile(s, store, buffers, parking));
      if (had != null && !sameIds(had.spec(), s)) {
        throw new FailedPreconditionException("Shuffle partition file " + s.fileId() + " is open here as "
            + had.describe() + ", not as partition " + s.partitionId() + " of shuffle " + s.shuffleId() + " of "
            + s.appId());
      }
    }
  }

  private static boolean sameIds(PartitionSpec a, PartitionSpec b) {
    return a.appId().equals(b.appId()) && a.shuffleId() == b.shuffleId() && a.partitionId() == b.partitionId();
  }

  /** The partition a batch of {@code appId}'s shuffle names; NOT_FOUND when it is not open here. */
  PartitionFile find(String appId, int shuffleId, int partitionId, long fileId) throws StrataException {
    PartitionFile p = partitions.get(fileId);
    if (p == null || !p.spec().appId().equals(appId) || p.spec().shuffleId() != shuffleId
        || p.spec().partitionId() != partitionId) {
      throw new NotFoundException("Unknown shuffle partition: partition " + partitionId + " (file " + fileId
          + ") of shuffle " + shuffleId + " of " + appId + " is not open on this worker");
    }
    return p;
  }

  /** Checks a batch before anything of its request is applied: its partition, its size, its checksum. */
  PartitionFile check(String appId, int shuffleId, Batch b) throws StrataException {
    checkAppId(appId);
    PartitionFile p = find(appId, shuffleId, b.partitionId(), b.fileId());
    int size = b.data().remaining();
    if (size > maxBatchBytes) {
      throw new InvalidArgumentException("Batch " + b.batchId() + " of map " + b.mapIndex() + " for "
          + p.describe() + " has " + size + " bytes, more than strata.worker.shuffle.batch.size.max ("
          + maxBatchBytes + ")");
    }
    if (b.length() != size) {
      throw new InvalidArgumentException("Batch " + b.batchId() + " of map " + b.mapIndex() + " for "
          + p.describe() + " says it has " + b.length() + " bytes but carries " + size);
    }
    if (b.mapIndex() < 0 || b.batchId() < 0) {
      throw new InvalidArgumentException("Batch " + b.batchId() + " of map " + b.mapIndex() + " for "
          + p.describe() + ": map index and batch id must not be negative");
    }
    if (b.offset() < -1) {
      throw new InvalidArgumentException("Batch " + b.batchId() + " of map " + b.mapIndex() + " for "
          + p.describe() + " has the negative offset " + b.offset());
    }
    int crc = BatchHeader.crc32c(b.data());
    if (crc != b.crc32c()) {
      throw new io.strata.common.exception.DataLossException(String.format("Batch %d of map %d for %s arrived "
          + "corrupt: the pusher's CRC32C is %08x, the bytes received give %08x; nothing of the request is "
          + "applied", b.batchId(), b.mapIndex(), p.describe(), b.crc32c(), crc));
    }
    return p;
  }

  /**
   * Appends checked batches at the end, in order, each atomically, and returns each one's offset. Blocks on the
   * store (a push pool thread). When an append fails, {@code offsets} holds those appended before it (the
   * rest -1) and the failure is thrown.
   */
  void append(List<PartitionFile> files, List<Batch> batches, long[] offsets) throws IOException {
    java.util.Arrays.fill(offsets, -1);
    for (int i = 0; i < batches.size(); i++) {
      offsets[i] = files.get(i).append(header(batches.get(i)), batches.get(i).data());
    }
  }

  /**
   * On a replica: appends checked forwarded batches, each at its offset (at the end when it has none). The future
   * completes when all are appended (a batch that came before those before it waits for them), or fails with
   * the first failure; {@code each} gets every batch's own future.
   */
  java.util.concurrent.CompletableFuture<Void> appendForwarded(List<PartitionFile> files, List<Batch> batches,
      List<java.util.concurrent.CompletableFuture<Void>> each) {
    for (int i = 0; i < batches.size(); i++) {
      Batch b = batches.get(i);
      PartitionFile f = files.get(i);
      if (b.offset() >= 0) {
        each.add(f.appendAt(b.offset(), header(b), b.data()));
        continue;
      }
      try {
        f.append(header(b), b.data());
        each.add(java.util.concurrent.CompletableFuture.completedFuture(null));
      } catch (IOException e) {
        each.add(java.util.concurrent.CompletableFuture.failedFuture(e));
      }
    }
    return java.util.concurrent.CompletableFuture.allOf(each.toArray(new java.util.concurrent.CompletableFuture<?>[0]));
  }

  private static BatchHeader header(Batch b) {
    return new BatchHeader(b.mapIndex(), b.attemptId(), b.batchId(), b.length(), b.crc32c());
  }

  /**
   * Seals partitions (see {@link PartitionFile#seal}); each one's failure is reported, not thrown, so one
   * bad copy does not hide the others' results. Blocks for master commits and UFS writes.
   */
  public List<Sealed> seal(String appId, int shuffleId, List<Long> fileIds, boolean writeThrough,
      List<Long> expectLengths, List<Integer> expectCrcs) throws StrataException {
    return seal(appId, shuffleId, fileIds, writeThrough, expectLengths, expectCrcs, List.of());
  }

  /**
   * As above; {@code inPlaceOf}, empty or one "host:port" per file id: this worker's copies are sealed in place of
   * those failed primaries' (each commit replaces the primary's copy at the master).
   */
  public List<Sealed> seal(String appId, int shuffleId, List<Long> fileIds, boolean writeThrough,
      List<Long> expectLengths, List<Integer> expectCrcs, List<String> inPlaceOf) throws StrataException {
    checkAppId(appId);
    if (new java.util.HashSet<>(fileIds).size() != fileIds.size()) {
      throw new InvalidArgumentException("A seal names each file id once: " + fileIds.size() + " file ids, "
          + new java.util.HashSet<>(fileIds).size() + " distinct");
    }
    if (!expectLengths.isEmpty() && (expectLengths.size() != fileIds.size() || expectCrcs.size() != fileIds.size())) {
      throw new InvalidArgumentException("A seal with expected lengths and CRCs needs one of each per file id: "
          + fileIds.size() + " file ids, " + expectLengths.size() + " lengths, " + expectCrcs.size() + " CRCs");
    }
    if (!inPlaceOf.isEmpty() && (inPlaceOf.size() != fileIds.size() || !expectLengths.isEmpty())) {
      throw new InvalidArgumentException("A seal in place of failed primaries names one primary per file id and "
          + "expects no lengths: " + fileIds.size() + " file ids, " + inPlaceOf.size() + " primaries, "
          + expectLengths.size() + " lengths");
    }
    // In three steps, so the master hears of every copy's blocks in one call rather than one per file (the calls of
    // sixteen seal threads batch only partly): each copy is committed in the store on the seal threads; the blocks
    // at the master, by this thread, which then asks the UFS write targets of the copies it sealed in one call too;
    // then the seals end (the UFS copies written) on the seal threads again.
    int n = fileIds.size();
    Map<Long, io.strata.worker.ufs.MasterClient.UfsTarget> targets = Map.of();
    PartitionFile[] files = new PartitionFile[n];
    Sealed[] refused = new Sealed[n];
    List<java.util.concurrent.CompletableFuture<PartitionFile.Local>> locals = new ArrayList<>(n);
    PartitionFile.Seal[] expects = new PartitionFile.Seal[n];
    for (int i = 0; i < n; i++) {
      long id = fileIds.get(i);
      PartitionFile.Seal expect = expects[i] = expectLengths.isEmpty() ? null
          : new PartitionFile.Seal(expectLengths.get(i), expectCrcs.get(i));
      PartitionFile p = partitions.get(id);
      java.util.concurrent.CompletableFuture<PartitionFile.Local> local = null;
      if (p == null || !p.spec().appId().equals(appId) || p.spec().shuffleId() != shuffleId) {
        refused[i] = Sealed.failed(id, "Unknown shuffle partition: file " + id + " of shuffle " + shuffleId + " of "
            + appId + " is not open on this worker");
      } else {
        files[i] = p;
        String replaces = inPlaceOf.isEmpty() || inPlaceOf.get(i).isEmpty() ? null : inPlaceOf.get(i);
        try {
          local = java.util.concurrent.CompletableFuture.supplyAsync(() -> p.sealLocally(expect, replaces), sealFiles);
        } catch (java.util.concurrent.RejectedExecutionException e) {
          refused[i] = Sealed.failed(id, "The worker is stopping: cannot seal " + p.describe());
        }
      }
      locals.add(local != null ? local : java.util.concurrent.CompletableFuture.completedFuture(null));
    }
    PartitionFile.Local[] local = new PartitionFile.Local[n];
    Exception[] refusal = new Exception[n];
    boolean answered = false;
    try {
      List<Committer.Commit> commits = new ArrayList<>();
      List<Integer> owners = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        local[i] = get(locals.get(i), shuffleId, appId);
        if (local[i] != null) {
          for (Committer.Commit c : local[i].commits()) {
            commits.add(c);
            owners.add(i);
          }
        }
      }
      List<Exception> answers;
      try {
        answers = commits.isEmpty() ? List.of() : committer.commitAll(commits);
      } catch (RuntimeException e) {
        answers = java.util.Collections.nCopies(commits.size(), e);
      }
      for (int k = 0; k < commits.size(); k++) {
        int i = owners.get(k);
        if (answers.get(k) != null && refusal[i] == null) {
          refusal[i] = answers.get(k);
        }
      }
      // Asked before any of these seals is published (below): the master names a new target each time it is asked
      // and completes a file at the last one, and until a seal is published nothing else can ask for its copy.
      targets = writeThrough ? targetsOfSealed(fileIds, local, refusal) : Map.of();
      answered = true;
    } finally {
      // Every seal begun here ends, so no later seal of these copies waits for one for ever: with the master's answer,
      // or, when this thread was interrupted first, failed with its blocks removed (once its store commits are done).
      for (int i = 0; i < n; i++) {
        PartitionFile p = files[i];
        Exception why = answered ? refusal[i] : new io.strata.common.exception.UnavailableException("The seal of "
            + (p == null ? "file " + fileIds.get(i) : p.describe()) + " was interrupted before its master commit");
        locals.get(i).thenAccept(l -> {
          if (l != null) {
            p.committedAtMaster(l, why); // a copy with nothing to commit too: its seal is published here
          }
        });
      }
    }
    List<java.util.concurrent.CompletableFuture<Sealed>> each = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long id = fileIds.get(i);
      PartitionFile p = files[i];
      PartitionFile.Local l = local[i];
      if (l == null) {
        each.add(java.util.concurrent.CompletableFuture.completedFuture(refused[i]));
        continue;
      }
      PartitionFile.Seal expect = expects[i];
      // Queued only once the copy's seal is settled: a seal thread never waits for another request's seal, which
      // could need this pool's queued tasks to settle (this request's own seals are settled by now).
      io.strata.worker.ufs.MasterClient.UfsTarget target = targets.get(id);
      each.add(l.outcome().handle((done, failed) -> (Void) null)
          .thenApplyAsync(v -> sealOne(id, p, l, target, writeThrough, expect), sealFiles)
          .exceptionally(e -> Sealed.failed(id, "The worker is stopping: cannot seal " + p.describe())));
    }
    List<Sealed> out = new ArrayList<>(n);
    for (java.util.concurrent.CompletableFuture<Sealed> f : each) {
      out.add(get(f, shuffleId, appId));
    }
    return out;
  }

  /**
   * The UFS write targets, in one master call, of the copies this request sealed (the first UFS write of each is
   * this request's to begin); none when there is only one, or when the call fails (each copy then asks alone).
   */
  private Map<Long, io.strata.worker.ufs.MasterClient.UfsTarget> targetsOfSealed(List<Long> fileIds,
      PartitionFile.Local[] local, Exception[] refusal) {
    List<Long> mine = new ArrayList<>();
    for (int i = 0; i < fileIds.size(); i++) {
      // Not yet published (one whose store commits failed is settled already).
      if (local[i] != null && local[i].mine() != null && refusal[i] == null && !local[i].mine().isDone()) {
        mine.add(fileIds.get(i));
      }
    }
    if (mine.size() < 2) {
      return Map.of();
    }
    try {
      return ufs.ufsWriteTargets(mine);
    } catch (StrataException | RuntimeException e) {
      return Map.of(); // each copy asks alone, and gets its own answer
    }
  }

  /** A seal step's result; the steps report their failures rather than throw them. */
  private static <T> T get(java.util.concurrent.CompletableFuture<T> f, int shuffleId, String appId)
      throws StrataException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new io.strata.common.exception.UnavailableException("Interrupted sealing shuffle partitions of shuffle "
          + shuffleId + " of " + appId);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("A partition seal threw instead of reporting", e.getCause());
    }
  }

  /**
   * Ends the seal of one copy on a {@code sealFiles} thread (its seal, this request's or another's, awaited, and the
   * UFS copy written); a failure is reported in the answer.
   */
  private Sealed sealOne(long id, PartitionFile p, PartitionFile.Local l,
      io.strata.worker.ufs.MasterClient.UfsTarget target, boolean writeThrough, PartitionFile.Seal expect) {
    try {
      PartitionFile.Seal done = p.finish(l, ufs, writeThrough, target);
      sealed.increment();
      sealedBytes.add(done.length());
      return new Sealed(id, done.length(), done.crc32c(), null, false, false);
    } catch (IOException | RuntimeException e) {
      sealFailures.increment();
      String why = e.getMessage() == null ? e.toString() : e.getMessage();
      if (expect != null) {
        p.drop(true); // a replica copy unlike its primary's must not stay as a second copy of the blocks
        partitions.remove(id, p);
        return new Sealed(id, -1, 0, why, false, !p.commitAttempted());
      }
      PartitionFile.Seal committed = p.committed(); // the UFS write failed after the commit
      return committed == null ? Sealed.failed(id, why)
          : new Sealed(id, committed.length(), committed.crc32c(), why, true, false);
    }
  }

  /**
   * Forgets partitions of a shuffle (all of them when {@code fileIds} is empty), dropping their temp blocks,
   * and their committed copies too with {@code committed}. Returns how many were dropped.
   */
  public int drop(String appId, int shuffleId, List<Long> fileIds, boolean committed) throws StrataException {
    checkAppId(appId);
    List<PartitionFile> gone = new ArrayList<>();
    java.util.Set<Long> want = new java.util.HashSet<>(fileIds);
    for (PartitionFile p : partitions.values()) {
      PartitionSpec s = p.spec();
      if (s.appId().equals(appId) && s.shuffleId() == shuffleId
          && (want.isEmpty() || want.contains(s.fileId())) && partitions.remove(s.fileId(), p)) {
        gone.add(p);
      }
    }
    for (PartitionFile p : gone) {
      p.drop(committed);
    }
    return gone.size();
  }

  /**
   * Forgets the partitions of these files: the master recovered their leases (the driver that created
   * them is gone) and the block store aborted their temp blocks. Returns how many were open here.
   */
  public int abandoned(java.util.Collection<Long> fileIds) {
    int n = 0;
    for (long id : fileIds) {
      PartitionFile p = partitions.remove(id);
      if (p != null) {
        p.drop(false);
        n++;
      }
    }
    return n;
  }

  /** The files of the partitions open here (their temp blocks are held past the idle timeout). */
  public List<Long> openFileIds() {
    return List.copyOf(partitions.keySet());
  }

  /** Bytes of forwarded batches waiting here for the ones before them, over all copies. */
  long parkedBytes() {
    return parking.held();
  }

  /** Partitions sealed here so far. */
  public long sealed() {
    return sealed.sum();
  }

  /** Bytes of the partitions {@link #sealed} counts. */
  public long sealedBytes() {
    return sealedBytes.sum();
  }

  /** Partition seals that failed here so far (reported to the caller, not thrown). */
  public long sealFailures() {
    return sealFailures.sum();
  }

  /** Partitions open here now. */
  public int openPartitions() {
    return partitions.size();
  }

  /** Heap the partition files' write-behind buffers hold now. */
  public long appendBufferBytes() {
    return buffers.held();
  }

  /** Bytes appended to a partition open here (tests), or -1. */
  public long appendedBytes(long fileId) {
    PartitionFile p = partitions.get(fileId);
    return p == null ? -1 : p.length();
  }
}

package io.strata.worker.ufs;

import io.strata.common.exception.AlreadyExistsException;
import io.strata.common.exception.DeadlineExceededException;
import io.strata.common.exception.FailedPreconditionException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.StrataException;
import io.strata.server.ufs.UfsManager;
import io.strata.server.ufs.UfsStatus;
import io.strata.server.ufs.UnderFileSystem;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.MasterClient.BlockSource;
import io.strata.worker.ufs.MasterClient.UfsSource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads blocks of persisted files from the under file system when this worker does not hold them
 * (read-through), and caches them.
 *
 * <p>Protocol. A read asks the master where the block comes from; a block of a file that is not
 * persisted cannot be read here (NOT_FOUND). Before any UFS read the file's current length is checked
 * against the length Strata knows: a different length means the file changed under Strata
 * (FAILED_PRECONDITION; loadMetadata picks the change up). The file is stat'ed again after the last byte read,
 * before a block is committed and before a reader is told its range is complete: a file rewritten in place during
 * the read (same length, new bytes) fails it the same way rather than serving or caching mixed bytes. A NO_CACHE
 * read streams its range straight from
 * the UFS. A caching read runs at most one load per block id at a time: the first requester's load reads
 * the whole block into a temp block in chunks, streaming the requester's range to it as the chunks arrive,
 * then commits the block locally and at the master exactly as a written block. The load never waits for
 * that reader: the first chunk it is not ready for (its transport's buffer full: a slow or stalled client)
 * detaches it, the load goes on at the under file system's speed, and after the commit the reader gets the
 * rest of its range from the store, from the first byte it was not sent ({@link ReadSink#resumeFromStore}),
 * after the waiters; a reader that cancels is dropped. So a slow first reader never holds up the others
 * waiting for the same block (they would time out and read it from the UFS again elsewhere).
 * Later requesters of the same block wait for that load without holding a thread and then read the
 * committed block from the store. A failed load aborts its temp block and fails every waiter, and a
 * detached first reader, with its cause. When the store already holds the block the read is served from
 * it; when another writer holds its temp block (a client write, a copy from a peer) the range is streamed
 * from the UFS uncached.
 *
 * <p>Every load and every uncached stream counts one UFS block read ({@link #ufsBlockReads()}).
 *
 * <p>Threading: thread-safe. {@link #read} returns at once and runs on the UFS executor;
 * {@link #readFrom} and {@link #cache} block the calling thread (a worker executor thread, never a gRPC
 * event thread). The in-flight loads are a concurrent map; each load belongs to the thread running it.
 */
final class UfsBlockLoader {
  /** What a finished load left behind. */
  enum Outcome {
    /** The block is committed in the store. */
    CACHED,
    /** Another writer holds the block's temp block: nothing was loaded. */
    NOT_CACHED
  }

  private final BlockStore store;
  private final MasterClient master;
  private final UfsManager ufs;
  private final Executor executor;
  private final int bufferBytes;
  private final long stallTimeoutMs;
  private final AtomicLong ufsReads = new AtomicLong();
  private final java.util.concurrent.atomic.LongAdder ufsBytes = new java.util.concurrent.atomic.LongAdder();
  private final ConcurrentHashMap<Long, CompletableFuture<Outcome>> loads = new ConcurrentHashMap<>();

  UfsBlockLoader(BlockStore store, MasterClient master, UfsManager ufs, Executor executor, int bufferBytes,
      long stallTimeoutMs) {
    if (bufferBytes <= 0) {
      throw new IllegalArgumentException("UFS read buffer must be positive, got " + bufferBytes);
    }
    this.store = store;
    this.master = master;
    this.ufs = ufs;
    this.executor = executor;
    this.bufferBytes = bufferBytes;
    this.stallTimeoutMs = stallTimeoutMs;
  }

  /** Block reads from the under file system so far: one per load, one per uncached stream. */
  long ufsBlockReads() {
    return ufsReads.get();
  }

  /** Bytes read from under file systems so far (loads and uncached streams). */
  long ufsBytesRead() {
    return ufsBytes.sum();
  }

  /** Blocks being loaded now. */
  int loadsInFlight() {
    return loads.size();
  }

  /** True when a load of {@code blockId} is running. */
  boolean isLoading(long blockId) {
    return loads.containsKey(blockId);
  }

  /**
   * Serves a read of a block this worker did not hold when asked: on the UFS executor, asks the master
   * for its source and continues as {@link #readFrom}; from the store instead if it was cached meanwhile,
   * unless {@code ufsOnly} (the store's copy was found corrupt). Returns at once. A task whose reader cancelled
   * while it was queued does nothing; a full queue fails the read UNAVAILABLE ({@link UfsErrors#refused}).
   */
  void read(long blockId, long offset, long length, boolean noCache, boolean ufsOnly, ReadSink sink) {
    try {
      executor.execute(() -> {
        if (sink.isCancelled()) {
          return; // its reader went while it waited in the queue: no master call, no UFS read for nobody
        }
        BlockSource src;
        try {
          if (!ufsOnly && inStore(blockId)) {
            sink.serveFromStore();
            return;
          }
          src = master.blockSource(blockId);
        } catch (Throwable t) {
          sink.fail(UfsErrors.wrap("Finding the source of block " + blockId, t));
          return;
        }
        readFrom(src, offset, length, noCache, sink);
      });
    } catch (RejectedExecutionException e) {
      sink.fail(UfsErrors.refused(executor, "read block " + blockId));
    }
  }

  /** Serves a read of {@code [offset, offset + length)} of the block {@code src} describes. Never throws. */
  void readFrom(BlockSource src, long offset, long length, boolean noCache, ReadSink sink) {
    long id = src.blockId();
    try {
      if (src.ufs() == null) {
        throw new NotFoundException("Block " + id + " is not on this worker and its file is not persisted in the "
            + "under file system, so there is no copy to read it from");
      }
      if (offset < 0 || length < 0 || offset > src.length() || length > src.length() - offset) {
        throw new OutOfRangeException("Block " + id + " has " + src.length() + " bytes; cannot read " + length
            + " bytes at offset " + offset);
      }
      if (length == 0) {
        sink.complete();
        return;
      }
      if (noCache) {
        streamUncached(src, offset, length, sink);
        return;
      }
    } catch (Throwable t) {
      sink.fail(UfsErrors.wrap("Reading block " + id + " from the under file system file " + uriOf(src), t));
      return;
    }
    readCaching(src, offset, length, sink);
  }

  private static String uriOf(BlockSource src) {
    return src.ufs() == null ? "(none)" : src.ufs().uri();
  }

  private void readCaching(BlockSource src, long offset, long length, ReadSink sink) {
    long id = src.blockId();
    CompletableFuture<Outcome> mine = new CompletableFuture<>();
    CompletableFuture<Outcome> running = loads.putIfAbsent(id, mine);
    if (running != null) {
      running.whenComplete((outcome, err) -> afterWait(src, offset, length, sink, outcome, err));
      return;
    }
    Delivery d = new Delivery(sink, offset, offset + length);
    Outcome outcome;
    try {
      outcome = runLoad(src, mine, d);
    } catch (StrataException e) {
      ReadSink s = d.take();
      if (s != null) {
        s.fail(e);
      }
      return;
    }
    ReadSink s = d.take();
    if (s != null) {
      // The load did not finish this reader: the block was there already, someone else writes it (nothing was
      // streamed), or the reader was detached (it gets the rest, from the first byte it was not sent).
      long from = d.next();
      afterWait(src, from, offset + length - from, s, outcome, null, from > offset);
    }
  }

  /** A reader whose block was being loaded by another request, now finished. */
  private void afterWait(BlockSource src, long offset, long length, ReadSink sink, Outcome outcome, Throwable err) {
    afterWait(src, offset, length, sink, outcome, err, false);
  }

  /**
   * A reader whose block's load finished: served {@code [offset, offset + length)}. With {@code resumed} the reader
   * was sent the bytes before {@code offset} already (a detached first reader): from the store it gets the rest
   * only, and without checksums, as the bytes before came.
   */
  private void afterWait(BlockSource src, long offset, long length, ReadSink sink, Outcome outcome, Throwable err,
      boolean resumed) {
    if (sink.isCancelled()) {
      return;
    }
    if (err != null) {
      sink.fail(err);
      return;
    }
    if (outcome == Outcome.CACHED) {
      if (resumed) {
        sink.resumeFromStore(offset);
      } else {
        sink.serveFromStore();
      }
      return;
    }
    try {
      executor.execute(() -> {
        if (sink.isCancelled()) {
          return;
        }
        try {
          streamUncached(src, offset, length, sink);
        } catch (Throwable t) {
          sink.fail(UfsErrors.wrap("Reading block " + src.blockId() + " from the under file system file "
              + uriOf(src), t));
        }
      });
    } catch (RejectedExecutionException e) {
      sink.fail(UfsErrors.refused(executor, "read block " + src.blockId()));
    }
  }

  /**
   * Caches a block no reader waits for (async caching), on the calling thread. False when a load of it
   * is already running (that load caches it) or another writer holds its temp block.
   */
  boolean cache(BlockSource src) throws StrataException {
    if (src.ufs() == null) {
      throw new NotFoundException("Block " + src.blockId() + " has no under file system source");
    }
    CompletableFuture<Outcome> mine = new CompletableFuture<>();
    if (loads.putIfAbsent(src.blockId(), mine) != null) {
      return false;
    }
    return runLoad(src, mine, new Delivery(null, 0, 0)) == Outcome.CACHED;
  }

  /** Runs the load {@code mine} stands for, then removes it from the in-flight map and completes it. */
  private Outcome runLoad(BlockSource src, CompletableFuture<Outcome> mine, Delivery d) throws StrataException {
    long id = src.blockId();
    Outcome outcome;
    try {
      outcome = load(src, d);
    } catch (Throwable t) {
      StrataException e = UfsErrors.wrap("Loading block " + id + " from the under file system file " + uriOf(src), t);
      loads.remove(id, mine);
      mine.completeExceptionally(e);
      throw e;
    }
    loads.remove(id, mine);
    mine.complete(outcome);
    return outcome;
  }

  private Outcome load(BlockSource src, Delivery d) throws IOException, InterruptedException {
    long id = src.blockId();
    UfsSource u = src.ufs();
    BlockStore.TempBlock temp;
    try {
      // Reserved whole up front: a cache with no room says so before any byte reaches the reader, who is
      // then served from the under file system without caching, rather than failing mid-block.
      store.createReserved(id, src.length(), 0);
      temp = store.reserved(id);
    } catch (AlreadyExistsException e) {
      return inStore(id) ? Outcome.CACHED : Outcome.NOT_CACHED;
    } catch (io.strata.common.exception.ResourceExhaustedException e) {
      return Outcome.NOT_CACHED; // every tier full of blocks it may not evict
    }
    try (UfsManager.Lease lease = ufs.acquire(u.uri(), u.options())) { // the client stays open under the stream
      UnderFileSystem fs = lease.ufs();
      UfsStatus before = checkUnchanged(fs, src, null);
      ufsReads.incrementAndGet();
      try (InputStream in = fs.open(u.uri(), u.offset())) {
        long pos = 0;
        while (pos < src.length()) {
          int n = (int) Math.min(bufferBytes, src.length() - pos);
          byte[] buf = new byte[n];
          readFully(in, buf, src, pos);
          ufsBytes.add(n);
          temp.append(ByteBuffer.wrap(buf));
          boolean readerDone = d.offer(pos, buf);
          pos += n;
          if (readerDone || pos == src.length()) {
            // The file may have been rewritten in place since the first stat (same length, new bytes): what was
            // read would then mix both versions. Checked again before the reader is told it has its range and
            // before the block is committed.
            checkUnchanged(fs, src, before);
          }
          if (readerDone) {
            d.complete();
          }
        }
      }
    } catch (Throwable t) {
      store.abort(temp);
      throw t;
    }
    LocalCommit.commit(store, master, temp);
    store.markEvictable(java.util.List.of(id)); // a copy of what the under file system holds
    return Outcome.CACHED;
  }

  /** Streams {@code [offset, offset + length)} of the block from the UFS, caching nothing. */
  private void streamUncached(BlockSource src, long offset, long length, ReadSink sink)
      throws IOException, InterruptedException {
    UfsSource u = src.ufs();
    try (UfsManager.Lease lease = ufs.acquire(u.uri(), u.options())) { // the client stays open under the stream
      UnderFileSystem fs = lease.ufs();
      UfsStatus before = checkUnchanged(fs, src, null);
      ufsReads.incrementAndGet();
      try (InputStream in = fs.open(u.uri(), u.offset() + offset)) {
        long pos = 0;
        while (pos < length) {
          int n = (int) Math.min(bufferBytes, length - pos);
          byte[] buf = new byte[n];
          readFully(in, buf, src, offset + pos);
          ufsBytes.add(n);
          if (!sink.awaitReady(stallTimeoutMs)) {
            if (!sink.isCancelled()) {
              sink.fail(stalled(src.blockId()));
            }
            return;
          }
          sink.send(ByteBuffer.wrap(buf));
          pos += n;
        }
      }
      checkUnchanged(fs, src, before); // a rewrite in place while streaming: the reader got mixed bytes
    }
    sink.complete();
  }

  private DeadlineExceededException stalled(long blockId) {
    return new DeadlineExceededException("The reader of block " + blockId + " took no data for " + stallTimeoutMs
        + " ms (strata.worker.ufs.read.stall.timeout); the worker stopped sending");
  }

  /**
   * Fails unless the UFS file still has the length Strata knows, and, on a file system whose mtime changes only with
   * the bytes ({@link UnderFileSystem#mtimeTracksContent}), the mtime Strata recorded: a file rewritten in place at
   * the same length would otherwise mix its new bytes with blocks cached from the old ones. With {@code before} (the
   * status this check returned before the read began), also fails when the mtime moved since then, on any file
   * system: a file replaced while it was being read. Where the UFS offers a content fingerprint (an object store's
   * ETag) and Strata recorded one, also fails when it differs (with {@code before}: when it moved since): the one
   * change an object store's mtime does not tell apart from a copy. Returns the status it checked.
   */
  private static UfsStatus checkUnchanged(UnderFileSystem fs, BlockSource src, UfsStatus before) throws IOException {
    UfsSource u = src.ufs();
    UfsStatus st = fs.getStatus(u.uri());
    String when = before == null ? "" : " while block " + src.blockId() + " was being read from it";
    if (st == null || st.directory()) {
      throw new FailedPreconditionException("File " + u.uri() + " changed in the under file system" + when + ": it is "
          + "no longer there (or is a directory), so block " + src.blockId() + " cannot be read from it; run "
          + "loadMetadata on its path to pick up the change");
    }
    if (st.length() != u.fileLength()) {
      throw new FailedPreconditionException("File " + u.uri() + " changed in the under file system" + when + ": "
          + "Strata knows it as " + u.fileLength() + " bytes but it now has " + st.length() + ", so block "
          + src.blockId() + " cannot be read from it; run loadMetadata on its path to pick up the change");
    }
    if (u.mtimeMs() != 0 && st.modificationTimeMs() != 0 && st.modificationTimeMs() != u.mtimeMs()
        && fs.mtimeTracksContent()) {
      throw new FailedPreconditionException("File " + u.uri() + " changed in the under file system" + when + ": it "
          + "was modified at " + java.time.Instant.ofEpochMilli(st.modificationTimeMs()) + ", after Strata recorded it "
          + "(as of " + java.time.Instant.ofEpochMilli(u.mtimeMs()) + "), so block " + src.blockId() + " cannot be "
          + "read from it; run loadMetadata on its path to pick up the change");
    }
    if (UfsStatus.contentTagsDiffer(u.contentTag(), st.contentTag())
        || (before != null && UfsStatus.contentTagsDiffer(before.contentTag(), st.contentTag()))) {
      throw new FailedPreconditionException("File " + u.uri() + " changed in the under file system" + when + ": its "
          + "content fingerprint (ETag) is " + st.contentTag() + ", not " + (before == null ? u.contentTag()
          : before.contentTag()) + " as " + (before == null ? "Strata recorded it" : "when the read began") + ", so "
          + "block " + src.blockId() + " cannot be read from it; run loadMetadata on its path to pick up the change");
    }
    if (before != null && st.modificationTimeMs() != before.modificationTimeMs()) {
      throw new FailedPreconditionException("File " + u.uri() + " changed in the under file system" + when + ": it "
          + "was modified at " + java.time.Instant.ofEpochMilli(st.modificationTimeMs()) + " (it was "
          + java.time.Instant.ofEpochMilli(before.modificationTimeMs()) + " when the read began), so the bytes read "
          + "may mix two versions and block " + src.blockId() + " is not served or cached; run loadMetadata on its "
          + "path to pick up the change");
    }
    return st;
  }

  /** Fills {@code buf} from {@code in}, which stands at byte {@code blockPos} of the block. */
  private static void readFully(InputStream in, byte[] buf, BlockSource src, long blockPos) throws IOException {
    int off = 0;
    while (off < buf.length) {
      int r = in.read(buf, off, buf.length - off);
      if (r < 0) {
        throw new FailedPreconditionException("File " + src.ufs().uri() + " changed in the under file system: it "
            + "ended at byte " + (src.ufs().offset() + blockPos + off) + " while reading block " + src.blockId()
            + "; run loadMetadata on its path to pick up the change");
      }
      off += r;
    }
  }

  private boolean inStore(long blockId) throws StrataException {
    try {
      store.get(blockId);
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /**
   * The first requester's share of a load: the bytes of its range, sent as the load reads them while the reader is
   * ready for them; never waited for (see the class comment). Used by the loading thread only.
   */
  private static final class Delivery {
    private ReadSink sink;
    private final long end;
    /** Block offset of the first byte of the range not sent to the reader yet. */
    private long next;
    /** The reader was not ready for a chunk: the load sends it nothing more (it resumes from the store). */
    private boolean detached;

    Delivery(ReadSink sink, long start, long end) {
      this.sink = sink;
      this.next = start;
      this.end = end;
    }

    /**
     * The block's bytes {@code [pos, pos + buf.length)} were just read: sends the reader its share if it is ready
     * for it, else detaches it. True when they end its range: the caller then checks the file is unchanged and
     * {@link #complete}s it.
     */
    boolean offer(long pos, byte[] buf) {
      if (sink == null || detached) {
        return false;
      }
      long from = Math.max(pos, next);
      long to = Math.min(pos + buf.length, end);
      if (from < to) {
        if (sink.isCancelled()) {
          sink = null; // the load goes on without this reader
          return false;
        }
        if (!sink.isReady()) {
          detached = true; // waiting for it would hold up the load, and every reader waiting for it
          return false;
        }
        sink.send(ByteBuffer.wrap(buf, (int) (from - pos), (int) (to - from)).slice());
        next = to;
      }
      return to >= end;
    }

    /** Block offset of the first byte of the reader's range it was not sent. */
    long next() {
      return next;
    }

    /** The reader has its whole range, checked: tells it so. */
    void complete() {
      ReadSink s = take();
      if (s != null) {
        s.complete();
      }
    }

    /** The reader, when the load has not finished with it yet; afterwards null. */
    ReadSink take() {
      ReadSink s = sink;
      sink = null;
      return s;
    }
  }
}

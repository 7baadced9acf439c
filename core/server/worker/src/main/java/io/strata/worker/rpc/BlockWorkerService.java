package io.strata.worker.rpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.OutOfRangeException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.BlockDataMarshalling;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.CacheBlockResponse;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.RemoveBlockRequest;
import io.strata.proto.RemoveBlockResponse;
import io.strata.proto.ReserveBlockRequest;
import io.strata.proto.ReserveBlockResponse;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import io.strata.server.Rpc;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.UfsFileWrite;
import io.strata.worker.ufs.UfsOperations;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The worker's data service. Writes: a client stream into a temp block, committed locally then at the
 * master when the client half-closes; any failure or cancel drops the temp block. Reads: a server
 * stream of chunks sent only while the transport is ready, so a slow reader holds at most a window of
 * data in memory; with {@code ufs_fallback}, a block this worker does not hold is read through the
 * under file system layer ({@link UfsOperations}), which streams it on worker threads. UFS file writes
 * (CACHE_THROUGH, THROUGH) stream into the file the master names, on the calling thread as block writes
 * do; any failure or cancel deletes the partial file. CacheBlock queues a background cache. ReserveBlock
 * reserves a whole block before its WriteBlock (ASYNC_THROUGH writers), waiting on the calling thread, with
 * no lock held, at most the worker's {@code strata.worker.write.space.wait.timeout} for room. Thread-safe;
 * per-call state lives in the call's observers.
 *
 * <p>Zero-copy (unless turned off): {@link #bindService} binds ReadBlock and WriteBlock with
 * {@link BlockDataMarshalling}'s marshallers. Store reads fill pooled direct buffers from the block file
 * and lend them to gRPC until written; block writes parse aliased over the transport's buffers and write
 * them to the temp block's channel, then release them. A call whose client asks for the plain path
 * ({@link BlockDataMarshalling#PLAIN_HEADER}) reads into heap arrays instead.
 */
public final class BlockWorkerService implements BlockWorkerServiceGrpc.AsyncService, io.grpc.BindableService {
  /** How committed blocks reach the master. */
  @FunctionalInterface
  public interface Committer {
    void commit(long blockId, long length, String tier) throws StrataException;

    /**
     * Commits a finished temp block in the store (fsynced first on fsync tiers), then at the master; when
     * the master refuses (file gone, complete, block too long), the local block is removed again.
     */
    default BlockStore.BlockMeta commitTemp(BlockStore store, BlockStore.TempBlock temp) throws IOException {
      BlockStore.BlockMeta meta = store.commit(temp);
      try {
        commit(meta.blockId(), meta.length(), meta.tier());
      } catch (StrataException | RuntimeException e) {
        try {
          store.remove(meta.blockId());
        } catch (IOException ignored) {
          // The master does not know the block; the next registration report cleans it.
        }
        throw e;
      }
      return meta;
    }
  }

  private final BlockStore store;
  private final Committer committer;
  private final UfsOperations ufs;
  private final int maxChunk;
  private final long maxSpaceWaitMs;
  private final IdleWatch stallWatch;
  private final IdleWatch ufsWriteWatch;
  private final boolean zeroCopy;
  private final BlockDataMarshalling marshalling = new BlockDataMarshalling();
  private final DirectBufferPool pool = new DirectBufferPool(POOL_FREE_BYTES);

  /** Direct buffers kept for reuse: a few chunks of the largest size per concurrent read. */
  private static final long POOL_FREE_BYTES = 64L << 20;
  /** Set for a ReadBlock call whose client asked for the plain path. */
  private static final Context.Key<Boolean> PLAIN_READ = Context.keyWithDefault("strata-plain-read", false);
  /** Block bytes received by WriteBlock streams (short-circuit writes send none). */
  private final java.util.concurrent.atomic.LongAdder streamedWriteBytes = new java.util.concurrent.atomic.LongAdder();

  /** A service whose streams are never ended for idling (tests of other things). */
  public BlockWorkerService(BlockStore store, Committer committer, UfsOperations ufs, int maxChunk) {
    this(store, committer, ufs, maxChunk, 0, IdleWatch.NONE, IdleWatch.NONE, true);
  }

  /**
   * A service whose whole-block reservations wait at most {@code maxSpaceWaitMs} for room, whose block
   * reads end when the reader takes no data for {@code stallWatch}'s timeout and whose UFS file writes end
   * (their partial files deleted) when no data comes for {@code ufsWriteWatch}'s. With {@code zeroCopy}
   * false, every call uses protobuf's own marshallers and heap buffers.
   */
  public BlockWorkerService(BlockStore store, Committer committer, UfsOperations ufs, int maxChunk,
      long maxSpaceWaitMs, IdleWatch stallWatch, IdleWatch ufsWriteWatch, boolean zeroCopy) {
    this.store = store;
    this.committer = committer;
    this.ufs = ufs;
    this.maxChunk = maxChunk;
    this.maxSpaceWaitMs = maxSpaceWaitMs;
    this.stallWatch = stallWatch;
    this.ufsWriteWatch = ufsWriteWatch;
    this.zeroCopy = zeroCopy;
  }

  /** The generated binding, with ReadBlock and WriteBlock on the zero-copy marshallers (unless off). */
  @Override
  @SuppressWarnings("unchecked")
  public ServerServiceDefinition bindService() {
    ServerServiceDefinition plain = BlockWorkerServiceGrpc.bindService(this);
    if (!zeroCopy) {
      return plain;
    }
    ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(plain.getServiceDescriptor().getName());
    for (ServerMethodDefinition<?, ?> m : plain.getMethods()) {
      String name = m.getMethodDescriptor().getFullMethodName();
      if (name.equals(marshalling.readBlock().getFullMethodName())) {
        ServerCallHandler<ReadBlockRequest, ReadBlockResponse> h =
            (ServerCallHandler<ReadBlockRequest, ReadBlockResponse>) m.getServerCallHandler();
        b.addMethod(marshalling.readBlock(), (call, headers) ->
            BlockDataMarshalling.PLAIN.equals(headers.get(BlockDataMarshalling.PLAIN_HEADER))
                ? Contexts.interceptCall(Context.current().withValue(PLAIN_READ, true), call, headers, h)
                : h.startCall(call, headers));
      } else if (name.equals(marshalling.writeBlock().getFullMethodName())) {
        b.addMethod(marshalling.writeBlock(),
            (ServerCallHandler<WriteBlockRequest, WriteBlockResponse>) m.getServerCallHandler());
      } else {
        b.addMethod(m);
      }
    }
    return b.build();
  }

  /** Chunks read into pooled direct buffers so far (the zero-copy read path). */
  public long directChunksRead() {
    return pool.acquired();
  }

  /** Block write messages parsed by the zero-copy marshaller so far (sliced, or from one copy). */
  public long aliasedWriteChunks() {
    return marshalling.writeRequests().aliasedParses() + marshalling.writeRequests().oneCopyParses();
  }

  /** Pooled buffers lent to gRPC and not yet back, plus received chunks not yet released (leak tests). */
  public int outstandingBuffers() {
    return pool.lent() + marshalling.outstanding();
  }

  /** Block bytes received through WriteBlock streams so far. */
  public long streamedWriteBytes() {
    return streamedWriteBytes.sum();
  }

  @Override
  public void reserveBlock(ReserveBlockRequest req, StreamObserver<ReserveBlockResponse> o) {
    Rpc.unary(o, () -> {
      store.createReserved(req.getBlockId(), req.getMaxLength(), Math.min(Math.max(0, req.getWaitMs()),
          maxSpaceWaitMs));
      return ReserveBlockResponse.getDefaultInstance();
    });
  }

  @Override
  public StreamObserver<WriteBlockRequest> writeBlock(StreamObserver<WriteBlockResponse> response) {
    return new BlockWriteCall(response);
  }

  /**
   * One block write. gRPC delivers its callbacks serially. When the writer sends checksums, each one is
   * compared with the store's own over the bytes received as soon as its chunk is complete.
   */
  private final class BlockWriteCall implements StreamObserver<WriteBlockRequest> {
    private final StreamObserver<WriteBlockResponse> response;
    private BlockStore.TempBlock temp;
    private boolean failed;
    private boolean writerSums;
    private int[] sent = new int[16];
    private int sentCount;
    private int verified;

    BlockWriteCall(StreamObserver<WriteBlockResponse> response) {
      this.response = response;
    }

    @Override
    public void onNext(WriteBlockRequest req) {
      if (failed) {
        return;
      }
      try {
        if (temp == null) {
          if (!req.hasHeader()) {
            throw new InvalidArgumentException("The first message of a block write must carry the header "
                + "(block id and maximum length)");
          }
          int perChecksum = req.getHeader().getBytesPerChecksum();
          if (perChecksum != 0 && perChecksum != ChunkChecksums.CHUNK_BYTES) {
            throw new InvalidArgumentException("Block " + req.getHeader().getBlockId() + ": checksums of "
                + perChecksum + "-byte chunks are not supported; this worker uses " + ChunkChecksums.CHUNK_BYTES);
          }
          writerSums = perChecksum != 0;
          temp = req.getHeader().getReserved() ? store.reserved(req.getHeader().getBlockId())
              : store.createTemp(req.getHeader().getBlockId(), req.getHeader().getMaxLength());
        } else if (req.hasHeader()) {
          throw new InvalidArgumentException("Block " + temp.blockId() + ": only the first message may carry "
              + "a header");
        }
        if (!writerSums && req.getChunkCrc32CCount() > 0) {
          throw new InvalidArgumentException("Block " + temp.blockId() + ": checksums sent, but the header did "
              + "not set bytes_per_checksum");
        }
        // One append per transport buffer the chunk spans: flattening a rope would copy it.
        for (ByteBuffer piece : req.getChunk().asReadOnlyByteBufferList()) {
          temp.append(piece);
        }
        streamedWriteBytes.add(req.getChunk().size());
        if (writerSums) {
          for (int i = 0; i < req.getChunkCrc32CCount(); i++) {
            if (sentCount == sent.length) {
              sent = java.util.Arrays.copyOf(sent, sentCount * 2);
            }
            sent[sentCount++] = req.getChunkCrc32C(i);
          }
          ChunkChecksums.Builder mine = temp.checksums();
          int due = mine.completed();
          if (sentCount < due || sentCount > due + (mine.hasPartial() ? 1 : 0)) {
            throw new InvalidArgumentException("Block " + temp.blockId() + ": " + sentCount + " checksums sent for "
                + mine.length() + " bytes, which complete " + due + " checksum chunks of "
                + ChunkChecksums.CHUNK_BYTES + " bytes");
          }
          verify(mine, due);
        }
      } catch (Exception e) {
        fail(e);
      } finally {
        marshalling.writeRequests().release(req); // the chunk may alias the transport's buffer
      }
    }

    /** Compares the writer's checksums of chunks [verified, upTo) with the store's. */
    private void verify(ChunkChecksums.Builder mine, int upTo) throws StrataException {
      for (; verified < upTo; verified++) {
        if (sent[verified] != mine.get(verified)) {
          long from = ChunkChecksums.chunkStart(verified);
          throw new DataLossException(String.format("Block %d: checksum chunk %d (bytes %d..%d) arrived corrupt: "
              + "the writer's CRC32C is %08x, the bytes received give %08x; nothing is committed", temp.blockId(),
              verified, from, Math.min(mine.length(), from + ChunkChecksums.CHUNK_BYTES), sent[verified],
              mine.get(verified)));
        }
      }
    }

    private void fail(Throwable t) {
      failed = true;
      if (temp != null) {
        store.abort(temp);
      }
      response.onError(GrpcErrors.toStatus(t));
    }

    @Override
    public void onError(Throwable t) {
      // The client cancelled or the connection broke: nothing of this write may remain.
      failed = true;
      if (temp != null) {
        store.abort(temp);
      }
    }

    @Override
    public void onCompleted() {
      if (failed) {
        return;
      }
      if (temp == null) {
        fail(new InvalidArgumentException("A block write ended before its header was sent"));
        return;
      }
      BlockStore.BlockMeta meta;
      try {
        if (writerSums) {
          ChunkChecksums.Builder mine = temp.checksums();
          int all = mine.finish().length;
          if (sentCount != all) {
            throw new InvalidArgumentException("Block " + temp.blockId() + ": the writer sent " + sentCount
                + " checksums for " + mine.length() + " bytes, which are " + all + " checksum chunks");
          }
          verify(mine, all);
        }
        meta = committer.commitTemp(store, temp);
      } catch (Exception e) {
        fail(e); // the abort is a no-op once the store committed it
        return;
      }
      response.onNext(WriteBlockResponse.newBuilder().setLength(meta.length()).setTier(meta.tier()).build());
      response.onCompleted();
    }
  }

  @Override
  public void readBlock(ReadBlockRequest req, StreamObserver<ReadBlockResponse> o) {
    int chunk = req.getChunkSize() <= 0 ? maxChunk : Math.min(req.getChunkSize(), maxChunk);
    ReadStream stream = new ReadStream((ServerCallStreamObserver<ReadBlockResponse>) o, chunk);
    boolean lend = zeroCopy && !PLAIN_READ.get();
    stream.storeReader(s -> readFromStore(req, s, lend));
    try {
      if (req.getOffset() < 0) {
        throw new InvalidArgumentException("Block " + req.getBlockId() + ": negative read offset " + req.getOffset());
      }
      if (req.getLength() < 0) {
        throw new InvalidArgumentException("Block " + req.getBlockId() + ": negative read length "
            + req.getLength());
      }
      if (req.getUfsFallback() && !inStore(req.getBlockId())) {
        ufs.readThrough(req.getBlockId(), req.getOffset(), req.getLength(), req.getNoCache(), stream);
        return;
      }
      if (req.getUnlisted() && !req.getNoCache()) {
        ufs.announce(req.getBlockId());
      }
    } catch (Exception e) {
      stream.fail(e);
      return;
    }
    readFromStore(req, stream, lend);
  }

  private boolean inStore(long blockId) throws StrataException {
    try {
      store.get(blockId);
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** Serves a read from the local store (the normal path, and the path after a UFS load). */
  private void readFromStore(ReadBlockRequest req, ReadStream stream, boolean lend) {
    BlockStore.ReadHandle handle;
    long start = req.getOffset();
    long end;
    int[] sums = null;
    try {
      BlockStore.BlockMeta meta = store.get(req.getBlockId());
      if (start > meta.length() || req.getLength() > meta.length() - start) {
        throw new OutOfRangeException("Block " + req.getBlockId() + " has " + meta.length()
            + " bytes; cannot read " + req.getLength() + " bytes at offset " + start);
      }
      end = start + req.getLength();
      handle = store.openForRead(req.getBlockId(), req.getPromote());
      if (req.getChecksums() && end > start) {
        // Whole checksum chunks, so the reader can check every byte it is sent.
        long length = handle.meta().length();
        start = ChunkChecksums.alignDown(start);
        end = ChunkChecksums.alignUp(end, length);
        try {
          sums = handle.checksums();
        } catch (IOException | RuntimeException e) {
          handle.close();
          throw e;
        }
      }
    } catch (NotFoundException e) {
      if (req.getUfsFallback()) {
        // Removed (evicted, freed) since it was found here: the under file system still has it.
        ufs.readThrough(req.getBlockId(), req.getOffset(), req.getLength(), req.getNoCache(), stream);
      } else {
        stream.fail(e);
      }
      return;
    } catch (Exception e) {
      stream.fail(e);
      return;
    }
    new BlockReadCall(stream, handle, start, end, stallWatch, sums, lend ? this : null).begin();
  }

  /**
   * One block read: sends chunks while the call is ready. Callbacks are serialised by the monitor. A
   * reader that takes nothing for the stall timeout is cancelled and the block released.
   */
  private static final class BlockReadCall implements IdleWatch.Watched {
    /** Lends pooled direct buffers to gRPC; null on the plain path (a heap array per chunk). */
    private final BlockWorkerService lender;
    private final ReadStream out;
    private final BlockStore.ReadHandle handle;
    private final FileChannel channel;
    private final long end;
    private final int chunk;
    private final IdleWatch stallWatch;
    /** The block's checksums when the reader asked for them (then start, end and chunk are chunk-aligned). */
    private final int[] sums;
    private long pos;
    private boolean done;
    private volatile long lastSentNanos = System.nanoTime();
    private Runnable unwatch = () -> { };

    BlockReadCall(ReadStream out, BlockStore.ReadHandle handle, long start, long end, IdleWatch stallWatch,
        int[] sums, BlockWorkerService lender) {
      this.lender = lender;
      this.out = out;
      this.handle = handle;
      this.channel = handle.channel();
      this.pos = start;
      this.end = end;
      this.sums = sums;
      this.chunk = sums == null ? out.chunk()
          : Math.max(1, out.chunk() / ChunkChecksums.CHUNK_BYTES) * ChunkChecksums.CHUNK_BYTES;
      this.stallWatch = stallWatch;
    }

    @Override
    public long lastProgressNanos() {
      return lastSentNanos;
    }

    @Override
    public synchronized boolean idle(String why) {
      if (!done) {
        finish();
        out.fail(new io.strata.common.exception.DeadlineExceededException("Block " + handle.meta().blockId()
            + " read: the reader made " + why));
      }
      return true;
    }

    void begin() {
      synchronized (this) {
        unwatch = stallWatch.watch(this);
      }
      out.listen(this::drain, this::finish);
      if (out.isCancelled()) {
        finish(); // cancelled before the listeners were in place: release the block now
        return;
      }
      drain();
    }

    private synchronized void finish() {
      if (!done) {
        done = true;
        unwatch.run();
        handle.close();
      }
    }

    private synchronized void drain() {
      try {
        while (!done && pos < end && out.isReady()) {
          int n = (int) Math.min(chunk, end - pos);
          if (lender == null) {
            ByteBuffer buf = ByteBuffer.allocate(n);
            fill(buf);
            out.sendOne(ReadStream.message(buf, pos, sums));
          } else {
            ByteBuffer buf = lender.pool.acquire(n);
            boolean lent = false;
            try {
              fill(buf);
              ReadBlockResponse msg = ReadStream.message(buf, pos, sums);
              lent = true;
              out.sendLent(msg, lender.marshalling.readResponses(), () -> lender.pool.release(buf));
            } finally {
              if (!lent) {
                lender.pool.release(buf);
              }
            }
          }
          pos += n;
          lastSentNanos = System.nanoTime();
        }
        if (!done && pos >= end) {
          finish();
          out.complete();
        }
      } catch (Exception e) {
        if (!done) {
          finish();
          out.fail(e);
        }
      }
    }

    /** Fills {@code buf} (to its limit) from the block file at {@link #pos}, and flips it. */
    private void fill(ByteBuffer buf) throws IOException {
      while (buf.hasRemaining()) {
        int r = channel.read(buf, pos + buf.position());
        if (r < 0) {
          throw new io.strata.common.exception.DataLossException("Block file ended at "
              + (pos + buf.position()) + ", before " + end);
        }
      }
      buf.flip();
    }
  }

  @Override
  public StreamObserver<WriteUfsFileRequest> writeUfsFile(StreamObserver<WriteUfsFileResponse> response) {
    return new UfsWriteCall(response);
  }

  /**
   * One UFS file write. gRPC delivers its callbacks serially; the idle watch may end it from its own
   * thread, so callbacks hold {@link #lock} (the watch only tries it: a write busy in the UFS is not idle).
   */
  private final class UfsWriteCall implements StreamObserver<WriteUfsFileRequest>, IdleWatch.Watched {
    private final StreamObserver<WriteUfsFileResponse> response;
    private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
    private UfsFileWrite write;
    private boolean failed;
    private volatile long lastDataNanos = System.nanoTime();
    private Runnable unwatch = () -> { };

    UfsWriteCall(StreamObserver<WriteUfsFileResponse> response) {
      this.response = response;
    }

    @Override
    public long lastProgressNanos() {
      return lastDataNanos;
    }

    @Override
    public boolean idle(String why) {
      if (!lock.tryLock()) {
        return false;
      }
      try {
        if (!failed) {
          fail(new io.strata.common.exception.DeadlineExceededException("Under file system write: the client made "
              + why + "; its partial file is deleted"));
        }
        return true;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void onNext(WriteUfsFileRequest req) {
      lock.lock();
      try {
        onNextLocked(req);
      } finally {
        lock.unlock();
      }
    }

    private void onNextLocked(WriteUfsFileRequest req) {
      if (failed) {
        return;
      }
      lastDataNanos = System.nanoTime();
      try {
        if (write == null) {
          if (!req.hasHeader()) {
            throw new InvalidArgumentException("The first message of an under file system write must carry the "
                + "header (the file id)");
          }
          write = ufs.openFileWrite(req.getHeader().getFileId());
          unwatch = ufsWriteWatch.watch(this);
        } else if (req.hasHeader()) {
          throw new InvalidArgumentException("Under file system write of file " + req.getHeader().getFileId()
              + ": only the first message may carry a header");
        }
        if (!req.getChunk().isEmpty()) {
          write.write(req.getChunk().asReadOnlyByteBuffer());
          lastDataNanos = System.nanoTime();
        }
      } catch (Exception e) {
        fail(e);
      }
    }

    private void fail(Throwable t) {
      failed = true;
      unwatch.run();
      if (write != null) {
        write.abort();
      }
      response.onError(GrpcErrors.toStatus(t));
    }

    @Override
    public void onError(Throwable t) {
      lock.lock();
      try {
        // The client cancelled or the connection broke: no partial file may remain.
        failed = true;
        unwatch.run();
        if (write != null) {
          write.abort();
        }
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void onCompleted() {
      lock.lock();
      try {
        onCompletedLocked();
      } finally {
        lock.unlock();
      }
    }

    private void onCompletedLocked() {
      if (failed) {
        return;
      }
      unwatch.run();
      if (write == null) {
        fail(new InvalidArgumentException("An under file system write ended before its header was sent"));
        return;
      }
      long length;
      try {
        length = write.complete();
      } catch (Exception e) {
        failed = true;
        response.onError(GrpcErrors.toStatus(e));
        return;
      }
      response.onNext(WriteUfsFileResponse.newBuilder().setLength(length).build());
      response.onCompleted();
    }
  }

  @Override
  public void cacheBlock(CacheBlockRequest req, StreamObserver<CacheBlockResponse> o) {
    Rpc.unary(o, () -> {
      if (req.getBlockId() < 0) {
        throw new InvalidArgumentException("Block id " + req.getBlockId() + " is negative");
      }
      return CacheBlockResponse.newBuilder().setAccepted(ufs.cacheBlock(req.getBlockId())).build();
    });
  }

  @Override
  public void removeBlock(RemoveBlockRequest req, StreamObserver<RemoveBlockResponse> o) {
    Rpc.unary(o, () -> {
      store.get(req.getBlockId());
      store.remove(req.getBlockId());
      return RemoveBlockResponse.getDefaultInstance();
    });
  }
}

package io.strata.worker.rpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.NotFoundException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.BlockDataMarshalling;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.CacheBlockRequest;
import io.strata.proto.CacheBlockResponse;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReserveBlockRequest;
import io.strata.proto.ReserveBlockResponse;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import io.strata.proto.WriteUfsFileRequest;
import io.strata.proto.WriteUfsFileResponse;
import io.strata.server.Rpc;
import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.UfsOperations;

/**
 * The worker's data service: decodes each call and hands it to the object that serves it. Writes: a
 * {@link BlockWriteCall} per WriteBlock stream. Reads: a {@link BlockReadCall} from the local store; with
 * {@code ufs_fallback}, a block this worker does not hold is read through the under file system layer
 * ({@link UfsOperations}), which streams it on worker threads. UFS file writes (CACHE_THROUGH, THROUGH): a
 * {@link UfsWriteCall} per stream. CacheBlock queues a background cache. ReserveBlock reserves a whole
 * block before its WriteBlock (ASYNC_THROUGH writers), waiting on the calling thread, with no lock held,
 * at most the worker's {@code strata.worker.write.space.wait.timeout} for room. Thread-safe; per-call
 * state lives in the call objects, and what they share in one {@link CallResources}.
 *
 * <p>Zero-copy (unless turned off): {@link #bindService} binds ReadBlock and WriteBlock with
 * {@link BlockDataMarshalling}'s marshallers. Store reads fill pooled direct buffers from the block file
 * and lend them to gRPC until written; block writes parse aliased over the transport's buffers and write
 * them to the temp block's channel, then release them. A call whose client asks for the plain path
 * ({@link BlockDataMarshalling#PLAIN_HEADER}) reads into heap arrays instead.
 */
public final class BlockWorkerService implements BlockWorkerServiceGrpc.AsyncService, io.grpc.BindableService {
  /** Direct buffers kept for reuse: a few chunks of the largest size per concurrent read. */
  private static final long POOL_FREE_BYTES = 64L << 20;
  /** Set for a ReadBlock call whose client asked for the plain path. */
  private static final Context.Key<Boolean> PLAIN_READ = Context.keyWithDefault("strata-plain-read", false);

  private final CallResources res;
  private final int maxChunk;
  private final long maxSpaceWaitMs;
  /** Permits of the reservations that may wait for room now. */
  private final java.util.concurrent.Semaphore spaceWaiters;
  private final int maxSpaceWaiters;
  private final boolean zeroCopy;

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
    this(store, committer, ufs, maxChunk, maxSpaceWaitMs, 32, stallWatch, ufsWriteWatch, zeroCopy);
  }

  /** As above, with at most {@code maxSpaceWaiters} reservations waiting for room at once. */
  public BlockWorkerService(BlockStore store, Committer committer, UfsOperations ufs, int maxChunk,
      long maxSpaceWaitMs, int maxSpaceWaiters, IdleWatch stallWatch, IdleWatch ufsWriteWatch, boolean zeroCopy) {
    this.spaceWaiters = new java.util.concurrent.Semaphore(maxSpaceWaiters);
    this.maxSpaceWaiters = maxSpaceWaiters;
    this.res = new CallResources(store, committer, ufs, stallWatch, ufsWriteWatch, new UfsWrites(),
        new BlockDataMarshalling(),
        new DirectBufferPool(POOL_FREE_BYTES), new StreamedBytes());
    this.maxChunk = maxChunk;
    this.maxSpaceWaitMs = maxSpaceWaitMs;
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
    BlockDataMarshalling marshalling = res.marshalling();
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
    return res.pool().acquired();
  }

  /** Block write messages parsed by the zero-copy marshaller so far (sliced, or from one copy). */
  public long aliasedWriteChunks() {
    return res.marshalling().writeRequests().aliasedParses() + res.marshalling().writeRequests().oneCopyParses();
  }

  /** Pooled buffers lent to gRPC and not yet back, plus received chunks not yet released (leak tests). */
  /**
   * Ends the under file system writes of files whose leases the master recovered (their partial files deleted);
   * returns how many ended now (one busy in the under file system is ended at a later call).
   */
  public int abortUfsWritesOf(java.util.Collection<Long> fileIds) {
    return res.ufsWrites().abortWritesOf(fileIds);
  }

  /** Under file system file writes open now (past their header). */
  public int openUfsWrites() {
    return res.ufsWrites().size();
  }

  public int outstandingBuffers() {
    return res.pool().lent() + res.marshalling().outstanding();
  }

  /** Block bytes received through WriteBlock streams so far. */
  public long streamedWriteBytes() {
    return res.streamed().written(false) + res.streamed().written(true);
  }

  /** Block bytes streamed by this service, per direction and listener (the worker's metrics read them). */
  public StreamedBytes streamed() {
    return res.streamed();
  }

  @Override
  public void reserveBlock(ReserveBlockRequest req, StreamObserver<ReserveBlockResponse> o) {
    Rpc.unary(o, () -> {
      long waitMs = Math.min(Math.max(0, req.getWaitMs()), maxSpaceWaitMs);
      // A waiting reservation holds a handler thread: only so many wait, the rest get room now or nothing.
      boolean waits = waitMs > 0 && spaceWaiters.tryAcquire();
      try {
        res.store().createReserved(req.getBlockId(), req.getMaxLength(), waits ? waitMs : 0);
      } catch (io.strata.common.exception.ResourceExhaustedException e) {
        if (waitMs > 0 && !waits) {
          throw new io.strata.common.exception.ResourceExhaustedException(e.getMessage() + " (not waiting for room: "
              + maxSpaceWaiters + " reservations already wait, " + io.strata.worker.WorkerKeys.WRITE_SPACE_WAITERS_MAX
              .name() + "=" + maxSpaceWaiters + ")");
        }
        throw e;
      } finally {
        if (waits) {
          spaceWaiters.release();
        }
      }
      return ReserveBlockResponse.getDefaultInstance();
    });
  }

  @Override
  public StreamObserver<WriteBlockRequest> writeBlock(StreamObserver<WriteBlockResponse> response) {
    return new BlockWriteCall(res, response);
  }

  @Override
  public void readBlock(ReadBlockRequest req, StreamObserver<ReadBlockResponse> o) {
    int chunk = req.getChunkSize() <= 0 ? maxChunk : Math.min(req.getChunkSize(), maxChunk);
    ReadStream stream = new ReadStream((ServerCallStreamObserver<ReadBlockResponse>) o, chunk);
    boolean lend = zeroCopy && !PLAIN_READ.get();
    boolean domainSocket = io.strata.server.GrpcServer.onDomainSocket();
    stream.storeReader((s, resumeAt) -> BlockReadCall.serve(res, resumeAt < 0 ? req : rest(req, resumeAt), s, lend,
        domainSocket));
    try {
      if (req.getOffset() < 0) {
        throw new InvalidArgumentException("Block " + req.getBlockId() + ": negative read offset " + req.getOffset());
      }
      if (req.getLength() < 0) {
        throw new InvalidArgumentException("Block " + req.getBlockId() + ": negative read length "
            + req.getLength());
      }
      if (req.getUfsOnly()) {
        if (!req.getUfsFallback()) {
          throw new InvalidArgumentException("Block " + req.getBlockId() + ": ufs_only reads from the under file "
              + "system and needs ufs_fallback");
        }
        res.ufs().readUfsOnly(req.getBlockId(), req.getOffset(), req.getLength(), stream);
        return;
      }
      if (req.getUfsFallback() && !inStore(req.getBlockId())) {
        res.ufs().readThrough(req.getBlockId(), req.getOffset(), req.getLength(), req.getNoCache(), stream);
        return;
      }
      if (req.getUnlisted() && !req.getNoCache()) {
        res.ufs().announce(req.getBlockId());
      }
    } catch (Exception e) {
      stream.fail(e);
      return;
    }
    BlockReadCall.serve(res, req, stream, lend, domainSocket);
  }

  /**
   * The rest of {@code req} from block offset {@code from}, without checksums: a UFS load's first reader was sent the
   * bytes before it (unchecksummed) and is served the rest from the store.
   */
  private static ReadBlockRequest rest(ReadBlockRequest req, long from) {
    return req.toBuilder().setOffset(from).setLength(req.getOffset() + req.getLength() - from).setChecksums(false)
        .build();
  }

  private boolean inStore(long blockId) throws StrataException {
    try {
      res.store().get(blockId);
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  @Override
  public StreamObserver<WriteUfsFileRequest> writeUfsFile(StreamObserver<WriteUfsFileResponse> response) {
    return new UfsWriteCall(res, response);
  }

  @Override
  public void cacheBlock(CacheBlockRequest req, StreamObserver<CacheBlockResponse> o) {
    Rpc.unary(o, () -> {
      if (req.getBlockId() < 0) {
        throw new InvalidArgumentException("Block id " + req.getBlockId() + " is negative");
      }
      return CacheBlockResponse.newBuilder().setAccepted(res.ufs().cacheBlock(req.getBlockId())).build();
    });
  }
}

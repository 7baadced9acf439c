package io.strata.worker.ufs;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.StrataException;
import io.strata.common.exception.UnavailableException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.common.grpc.GrpcErrors;
import io.strata.common.net.WorkerAddress;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Reads whole blocks from other workers over gRPC (async caching, persisting), the worker-to-worker edge
 * where protos meet the worker's UFS code. Callers pass only addresses the master returned for the
 * block; nothing here picks an address. Keeps one channel per peer address, opened on first use and
 * closed by {@link #close()} (a cluster has few workers, so the cache stays small).
 *
 * <p>Thread-safe; {@link #read} blocks the calling thread (a worker executor thread) for the transfer,
 * bounded by the peer read timeout.
 */
final class PeerClient implements Closeable {
  /** Takes the block's bytes in order. */
  @FunctionalInterface
  interface ChunkConsumer {
    void accept(ByteBuffer chunk) throws IOException;
  }

  private final long maxMessageBytes;
  private final long timeoutMs;
  private final Map<WorkerAddress, ManagedChannel> channels = new HashMap<>();
  private boolean closed;

  PeerClient(long maxMessageBytes, long timeoutMs) {
    this.maxMessageBytes = maxMessageBytes;
    this.timeoutMs = timeoutMs;
  }

  private synchronized ManagedChannel channel(WorkerAddress peer) throws UnavailableException {
    if (closed) {
      throw new UnavailableException("The worker is stopping; not reading from worker " + peer);
    }
    // One whose connect failed is replaced: a peer back on its old port is reached at once.
    return GrpcChannels.keptOrNew(channels, peer, () -> GrpcChannels.forAddress(peer.host(), peer.rpcPort(),
        maxMessageBytes));
  }

  /**
   * Streams block {@code blockId}, of {@code length} bytes, from {@code peer} into {@code out}; fails
   * (and cancels the call) on any error or when the peer sends another length. The peer sends its stored
   * checksums and each chunk is checked before it is passed on, so a corrupt copy is never copied: that
   * fails with a {@link io.strata.common.exception.CorruptBlockException} (DATA_LOSS), and the caller
   * tries its next source.
   */
  void read(WorkerAddress peer, long blockId, long length, ChunkConsumer out) throws StrataException {
    ManagedChannel ch = channel(peer);
    ReadBlockRequest req = ReadBlockRequest.newBuilder().setBlockId(blockId).setOffset(0).setLength(length)
        .setChecksums(true).build();
    String doing = "Reading block " + blockId + " from worker " + peer;
    Context.CancellableContext ctx = Context.current().withCancellation();
    try {
      ctx.call(() -> {
        Iterator<ReadBlockResponse> it = BlockWorkerServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS).readBlock(req);
        long got = 0;
        while (it.hasNext()) {
          ReadBlockResponse r = it.next();
          ByteString chunk = r.getChunk();
          if (r.getChunkCrc32CCount() > 0) {
            int bad = r.getOffset() != got
                || r.getChunkCrc32CCount() != ChunkChecksums.chunkCount(chunk.size()) ? 0
                : ChunkChecksums.firstMismatch(chunk.asReadOnlyByteBuffer(), r.getChunkCrc32CList());
            if (bad >= 0) {
              throw new io.strata.common.exception.CorruptBlockException(blockId, peer.toString(),
                  got + (long) bad * ChunkChecksums.CHUNK_BYTES, "its bytes fail their checksum (copy from a peer)");
            }
          }
          got += chunk.size();
          if (got > length) {
            throw new DataLossException(doing + ": it sent more than the " + length + " bytes the master knows");
          }
          out.accept(chunk.asReadOnlyByteBuffer());
        }
        if (got != length) {
          throw new DataLossException(doing + ": it sent " + got + " bytes, the master knows " + length);
        }
        return null;
      });
    } catch (io.strata.common.exception.CorruptBlockException e) {
      throw e; // as it is: its caller reports the peer's copy to the master
    } catch (Exception e) {
      StrataException s = e instanceof StrataException se ? se
          : (e instanceof IOException || e instanceof InterruptedException) ? UfsErrors.wrap(doing, e)
          : GrpcErrors.fromThrowable(e);
      throw UfsErrors.wrap(doing, s);
    } finally {
      ctx.cancel(null); // ends the call if the loop stopped early
    }
  }

  @Override
  public void close() {
    List<ManagedChannel> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(channels.values());
      channels.clear();
    }
    GrpcChannels.closeAll(all);
  }
}

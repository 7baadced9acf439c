package io.strata.worker.ufs;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.CorruptBlockException;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.ErrorCode;
import io.strata.common.exception.InternalException;
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
   * fails with a {@link CorruptBlockException} (DATA_LOSS), and the caller tries its next source. So does a
   * peer that answers DATA_LOSS about its own copy (its checksums cannot be read, its file is short), as
   * it does for a client's read.
   *
   * <p>Every chunk must carry its checksums: a peer asked for them sends them with every chunk of a block it
   * holds, or fails the read (DATA_LOSS) when its copy has none; it never sends bytes it cannot vouch for. The
   * checksums exist only beside the peer's copy (the master keeps none), so bytes without them cannot be
   * checked here in any other way: a chunk without checksums (a worker too old to send them, or a bug), with
   * a count that does not cover it, or at an offset other than the next one is refused before any of its bytes
   * is passed on, as INTERNAL naming what the peer sent. That is a broken protocol, not a corrupt copy: it is
   * not reported (the master would drop a copy that may well be good), and the caller tries its next source.
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
        while (true) {
          ReadBlockResponse r;
          try {
            if (!it.hasNext()) {
              break;
            }
            r = it.next();
          } catch (io.grpc.StatusRuntimeException e) {
            StrataException s = GrpcErrors.fromThrowable(e);
            if (s.code() == ErrorCode.DATA_LOSS) {
              // The peer found its own copy damaged (its checksums unreadable, its file short).
              throw new CorruptBlockException(blockId, peer.toString(), got, "the worker answered: "
                  + s.getMessage());
            }
            throw e;
          }
          ByteString chunk = r.getChunk();
          verify(peer, blockId, got, r, doing);
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
    } catch (CorruptBlockException e) {
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

  /**
   * Checks one message of the peer's read, which must start at block offset {@code at}, before any of its bytes
   * is used: a broken protocol is INTERNAL, bytes that fail their checksums a {@link CorruptBlockException}.
   */
  private static void verify(WorkerAddress peer, long blockId, long at, ReadBlockResponse r, String doing)
      throws StrataException {
    ByteString chunk = r.getChunk();
    int size = chunk.size();
    int count = r.getChunkCrc32CCount();
    int expected = ChunkChecksums.chunkCount(size);
    if (count == 0 && size > 0) {
      throw new InternalException(doing + ": it sent " + size + " bytes at offset " + at + " without the checksums "
          + "asked for (a worker too old to send them, or a bug): they cannot be verified, so nothing of this copy "
          + "is taken");
    }
    if (r.getOffset() != at || count != expected) {
      throw new InternalException(doing + ": it broke the read protocol, sending " + size + " bytes at offset "
          + r.getOffset() + " with " + count + " checksums where offset " + at + " with " + expected + " checksums "
          + "was due; nothing of this copy is taken");
    }
    int bad = ChunkChecksums.firstMismatch(chunk.asReadOnlyByteBuffer(), r.getChunkCrc32CList());
    if (bad >= 0) {
      throw new CorruptBlockException(blockId, peer.toString(), at + (long) bad * ChunkChecksums.CHUNK_BYTES,
          "its bytes fail their checksum (copy from a peer)");
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

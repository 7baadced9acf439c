package io.strata.worker.rpc;

import io.grpc.stub.StreamObserver;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.exception.DataLossException;
import io.strata.common.exception.InvalidArgumentException;
import io.strata.common.exception.StrataException;
import io.strata.common.grpc.GrpcErrors;
import io.strata.proto.WriteBlockRequest;
import io.strata.proto.WriteBlockResponse;
import io.strata.worker.store.BlockStore;
import io.strata.worker.store.SentChecksums;
import java.nio.ByteBuffer;

/**
 * One block write (WriteBlock): a client stream into a temp block, committed locally then at the master
 * when the client half-closes; any failure or cancel drops the temp block. With zero-copy on, each
 * message's chunk is parsed aliased over the transport's buffers; it is appended to the temp block's
 * channel piece by piece (never flattened), then released. When the writer sends checksums, each one is
 * compared with the store's own over the bytes received as soon as its chunk is complete.
 *
 * <p>Threading: gRPC delivers its callbacks serially, so its state needs no lock.
 */
final class BlockWriteCall implements StreamObserver<WriteBlockRequest> {
  private final CallResources res;
  private final StreamObserver<WriteBlockResponse> response;
  /** Whether the stream came over the data domain socket (else TCP): the byte counters' path. */
  private final boolean domainSocket;
  private BlockStore.TempBlock temp;
  private boolean failed;
  /** The writer's checksums, when its header set bytes_per_checksum; else null. */
  private SentChecksums sent;
  private int verified;

  BlockWriteCall(CallResources res, StreamObserver<WriteBlockResponse> response) {
    this.res = res;
    this.domainSocket = io.strata.server.GrpcServer.onDomainSocket();
    this.response = response;
  }

  @Override
  public void onNext(WriteBlockRequest req) {
    try {
      if (failed) {
        return; // a message that arrived after the write failed: its transport buffer is released all the same
      }
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
        sent = perChecksum != 0 ? SentChecksums.unbounded(req.getHeader().getBlockId()) : null;
        temp = req.getHeader().getReserved() ? res.store().reserved(req.getHeader().getBlockId())
            : res.store().createTemp(req.getHeader().getBlockId(), req.getHeader().getMaxLength());
        // Its liveness is this call's (a broken stream aborts it: onError) and its file's lease (the master's
        // recovery aborts it), not the time since the last chunk: a writer slower than a chunk per
        // strata.worker.temp.block.timeout must not lose its block to the idle-temp reaper.
        temp.hold();
      } else if (req.hasHeader()) {
        throw new InvalidArgumentException("Block " + temp.blockId() + ": only the first message may carry "
            + "a header");
      }
      if (sent == null && req.getChunkCrc32CCount() > 0) {
        throw new InvalidArgumentException("Block " + temp.blockId() + ": checksums sent, but the header did "
            + "not set bytes_per_checksum");
      }
      // One append per transport buffer the chunk spans: flattening a rope would copy it.
      for (ByteBuffer piece : req.getChunk().asReadOnlyByteBufferList()) {
        temp.append(piece);
      }
      res.streamed().written(domainSocket, req.getChunk().size());
      if (sent != null) {
        sent.add(req.getChunkCrc32CList());
        ChunkChecksums.Builder mine = temp.checksums();
        int due = mine.completed();
        if (sent.count() < due || sent.count() > due + (mine.hasPartial() ? 1 : 0)) {
          throw new InvalidArgumentException("Block " + temp.blockId() + ": " + sent.count() + " checksums sent "
              + "for " + mine.length() + " bytes, which complete " + due + " checksum chunks of "
              + ChunkChecksums.CHUNK_BYTES + " bytes");
        }
        verify(mine, due);
      }
    } catch (Exception e) {
      fail(e);
    } finally {
      res.marshalling().writeRequests().release(req); // the chunk may alias the transport's buffer
    }
  }

  /** Compares the writer's checksums of chunks [verified, upTo) with the store's. */
  private void verify(ChunkChecksums.Builder mine, int upTo) throws StrataException {
    for (; verified < upTo; verified++) {
      if (sent.get(verified) != mine.get(verified)) {
        long from = ChunkChecksums.chunkStart(verified);
        throw new DataLossException(String.format("Block %d: checksum chunk %d (bytes %d..%d) arrived corrupt: "
            + "the writer's CRC32C is %08x, the bytes received give %08x; nothing is committed", temp.blockId(),
            verified, from, Math.min(mine.length(), from + ChunkChecksums.CHUNK_BYTES), sent.get(verified),
            mine.get(verified)));
      }
    }
  }

  private void fail(Throwable t) {
    failed = true;
    if (temp != null) {
      res.store().abort(temp);
    }
    response.onError(GrpcErrors.toStatus(t));
  }

  @Override
  public void onError(Throwable t) {
    // The client cancelled or the connection broke: nothing of this write may remain.
    failed = true;
    if (temp != null) {
      res.store().abort(temp);
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
      if (sent != null) {
        ChunkChecksums.Builder mine = temp.checksums();
        int all = mine.finish().length;
        if (sent.count() != all) {
          throw new InvalidArgumentException("Block " + temp.blockId() + ": the writer sent " + sent.count()
              + " checksums for " + mine.length() + " bytes, which are " + all + " checksum chunks");
        }
        verify(mine, all);
      }
      meta = res.committer().commitTemp(res.store(), temp);
    } catch (Exception e) {
      fail(e); // the abort is a no-op once the store committed it
      return;
    }
    response.onNext(WriteBlockResponse.newBuilder().setLength(meta.length()).setTier(meta.tier()).build());
    response.onCompleted();
  }
}

package io.strata.master.web;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.strata.common.grpc.GrpcChannels;
import io.strata.master.block.BlockState;
import io.strata.master.block.WorkerState;
import io.strata.master.file.FileInfo;
import io.strata.proto.BlockWorkerServiceGrpc;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Reads the first {@value #BYTES} bytes of a file for the file browser, from a worker over its data RPC
 * (the master holds no data): from a live worker that caches the first block, else, for a persisted file,
 * through any live worker from the under file system without caching it ({@code ufs_fallback},
 * {@code no_cache}), so looking at a file never changes what is cached. The call is made on the web
 * thread with no lock held, bounded by {@value #TIMEOUT_MS} ms; the channel is closed after it.
 * Stateless and thread-safe.
 */
final class FileHead {
  static final int BYTES = 1024;
  static final long TIMEOUT_MS = 5000;
  private final long maxMessageBytes;

  FileHead(long maxMessageBytes) {
    this.maxMessageBytes = maxMessageBytes;
  }

  /** The bytes and the worker they came from, or why there are none. */
  record Result(byte[] bytes, String from, String error) {}

  Result read(FileInfo f, List<BlockState> blocks, List<WorkerState> live) {
    if (f.length() == 0 || blocks.isEmpty()) {
      return new Result(new byte[0], "(none: the file is empty)", null);
    }
    BlockState first = blocks.get(0);
    List<WorkerState> sources = new ArrayList<>();
    for (BlockState.Location l : first.locations()) {
      sources.add(l.worker());
    }
    if (sources.isEmpty() && f.persisted()) {
      sources.addAll(live);
    }
    if (sources.isEmpty()) {
      return new Result(null, null, "No live worker holds the first block and the file is not persisted ("
          + f.persistence() + "): its bytes cannot be read now.");
    }
    long length = Math.min(BYTES, first.length());
    String last = null;
    for (WorkerState w : sources) {
      try {
        return new Result(readFrom(w, first.blockId(), length), w.address().toString(), null);
      } catch (StatusRuntimeException e) {
        last = "Reading block " + first.blockId() + " from worker " + w.address() + " failed: "
            + e.getStatus().getCode() + " " + e.getStatus().getDescription();
      }
    }
    return new Result(null, null, last);
  }

  private byte[] readFrom(WorkerState w, long blockId, long length) {
    ManagedChannel ch = GrpcChannels.forAddress(w.address().host(), w.address().rpcPort(), maxMessageBytes);
    try {
      ReadBlockRequest req = ReadBlockRequest.newBuilder().setBlockId(blockId).setOffset(0).setLength(length)
          .setUfsFallback(true).setNoCache(true).build();
      Iterator<ReadBlockResponse> it = BlockWorkerServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(TIMEOUT_MS, TimeUnit.MILLISECONDS).readBlock(req);
      ByteArrayOutputStream out = new ByteArrayOutputStream((int) length);
      while (it.hasNext() && out.size() < length) {
        it.next().getChunk().writeTo(out);
      }
      byte[] all = out.toByteArray();
      return all.length <= length ? all : java.util.Arrays.copyOf(all, (int) length);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e); // ByteArrayOutputStream does not fail
    } finally {
      GrpcChannels.close(ch);
    }
  }
}

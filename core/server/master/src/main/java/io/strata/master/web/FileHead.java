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
 * through up to {@value #UFS_TRIES} live workers, picked at random, from the under file system without caching it
 * ({@code ufs_fallback}, {@code no_cache}), so looking at a file never changes what is cached. The calls are made on
 * the web thread with no lock held, all of them together bounded by {@value #TIMEOUT_MS} ms (a slow UFS never holds
 * a web thread for a timeout per worker), and cancelled once the bytes are in (so the worker stops streaming the
 * rest of the block).
 *
 * <p>Channels to workers are kept between page views: at most {@value #CHANNELS_MAX} (by default), one per worker,
 * the least recently used shut down when one more is needed (calls in flight on it finish first). {@link #close}
 * (with the web server) shuts them all down. Thread-safe: the monitor guards only the map, never a call.
 */
final class FileHead implements AutoCloseable {
  static final int BYTES = 1024;
  static final long TIMEOUT_MS = 5000;
  /** Workers tried for a persisted block no worker holds (each loads it from the UFS). */
  static final int UFS_TRIES = 3;
  /** Worker channels kept at most (a browsing user looks at the files of a few workers at a time). */
  static final int CHANNELS_MAX = 8;
  private final long maxMessageBytes;
  private final int maxChannels;
  /** By worker address, least recently used first; guarded by this. */
  private final java.util.LinkedHashMap<io.strata.common.net.WorkerAddress, ManagedChannel> channels =
      new java.util.LinkedHashMap<>(16, 0.75f, true);
  /** Channels made so far (for tests: a page view reuses its worker's). Guarded by this. */
  private long opened;
  private boolean closed;

  FileHead(long maxMessageBytes) {
    this(maxMessageBytes, CHANNELS_MAX);
  }

  /** With at most {@code maxChannels} pooled channels (tests use fewer to see the bound hold). */
  FileHead(long maxMessageBytes, int maxChannels) {
    this.maxMessageBytes = maxMessageBytes;
    this.maxChannels = maxChannels;
  }

  /** The pooled channel to {@code w}, made if needed; the one pushed out, if any, is shut down (not awaited). */
  private ManagedChannel channel(io.strata.common.net.WorkerAddress w) {
    ManagedChannel evicted = null;
    ManagedChannel ch;
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("The web UI is closed");
      }
      ch = channels.get(w);
      if (ch != null && GrpcChannels.connectFailed(ch)) { // a worker back on its old port is read at once
        channels.remove(w);
        evicted = ch;
        ch = null;
      }
      if (ch == null) {
        if (channels.size() >= maxChannels) {
          java.util.Iterator<ManagedChannel> eldest = channels.values().iterator();
          evicted = eldest.next();
          eldest.remove();
        }
        ch = GrpcChannels.forAddress(w.host(), w.rpcPort(), maxMessageBytes); // no connect until the first call
        channels.put(w, ch);
        opened++;
      }
    }
    if (evicted != null) {
      evicted.shutdown();
    }
    return ch;
  }

  /** Worker channels open now, and made since start (for tests). */
  synchronized int openChannels() {
    return channels.size();
  }

  synchronized long channelsOpened() {
    return opened;
  }

  @Override
  public void close() {
    GrpcChannels.closeAll(takeAll()); // each awaited outside the lock
  }

  /** Marks the reader closed and empties the pool; returns what it held. */
  private synchronized List<ManagedChannel> takeAll() {
    closed = true;
    List<ManagedChannel> all = List.copyOf(channels.values());
    channels.clear();
    return all;
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
      // Any worker can load it from the UFS: a few, picked at random, not every one in turn.
      List<WorkerState> shuffled = new ArrayList<>(live);
      java.util.Collections.shuffle(shuffled);
      sources.addAll(shuffled.subList(0, Math.min(UFS_TRIES, shuffled.size())));
    }
    if (sources.isEmpty()) {
      return new Result(null, null, "No live worker holds the first block and the file is not persisted ("
          + f.persistence() + "): its bytes cannot be read now.");
    }
    long length = Math.min(BYTES, first.length());
    String last = null;
    // One deadline for the whole view, however many copies are tried: a web thread is held at most this long.
    io.grpc.Deadline deadline = io.grpc.Deadline.after(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    for (WorkerState w : sources) {
      if (deadline.isExpired()) {
        last = (last == null ? "" : last + "; ") + "no time left to try worker " + w.address();
        break;
      }
      try {
        return new Result(readFrom(w, first.blockId(), length, deadline), w.address().toString(), null);
      } catch (StatusRuntimeException e) {
        last = "Reading block " + first.blockId() + " from worker " + w.address() + " failed: "
            + e.getStatus().getCode() + " " + e.getStatus().getDescription();
      }
    }
    return new Result(null, null, last);
  }

  private byte[] readFrom(WorkerState w, long blockId, long length, io.grpc.Deadline deadline) {
    ManagedChannel ch = channel(w.address());
    ReadBlockRequest req = ReadBlockRequest.newBuilder().setBlockId(blockId).setOffset(0).setLength(length)
        .setUfsFallback(true).setNoCache(true).build();
    // The channel stays open for the next view: cancelling the call is what ends the worker's stream.
    io.grpc.Context.CancellableContext call = io.grpc.Context.current().withCancellation();
    try {
      return call.call(() -> {
        Iterator<ReadBlockResponse> it = BlockWorkerServiceGrpc.newBlockingStub(ch)
            .withDeadline(deadline).readBlock(req);
        ByteArrayOutputStream out = new ByteArrayOutputStream((int) length);
        while (it.hasNext() && out.size() < length) {
          it.next().getChunk().writeTo(out);
        }
        byte[] all = out.toByteArray();
        return all.length <= length ? all : java.util.Arrays.copyOf(all, (int) length);
      });
    } catch (StatusRuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e); // only the stream's own failures (StatusRuntimeException) are thrown
    } finally {
      call.cancel(null);
    }
  }
}

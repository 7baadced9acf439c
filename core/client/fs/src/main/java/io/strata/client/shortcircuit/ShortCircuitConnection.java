package io.strata.client.shortcircuit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.unix.DomainSocketReadMode;
import io.netty.channel.unix.FileDescriptor;
import io.netty.util.ReferenceCountUtil;
import io.strata.proto.CloseBlockProto;
import io.strata.proto.OpenBlockProto;
import io.strata.proto.SendFdProto;
import io.strata.proto.ShortCircuitRequest;
import io.strata.proto.ShortCircuitResponse;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One domain socket connection to a worker's short-circuit server, used in lockstep: each call sends
 * one request and waits for its one answer (protocol in strata_shortcircuit.proto). Before asking for a descriptor it switches the socket to descriptor
 * reading and back after, so the descriptor is never consumed by an ordinary byte read. A CLOSE is sent
 * without waiting ({@link #closeQuietly}); its answer is read, and dropped, before the next call's, and
 * always before the socket reads descriptors. Sends do not wait for the event loop to write either: the
 * answer (or the connection's end) is what a call waits for. On a shared host every wait is a thread
 * wake-up of up to a millisecond, and a block read short-circuit costs three of them this way
 * (OPEN with its checksums, SEND_FD, the next OPEN's drained CLOSE) instead of eight.
 *
 * <p>Not thread-safe: one owner at a time ({@link ShortCircuitClient} hands a connection to one open block);
 * Netty's event loop only fills the inbox.
 */
final class ShortCircuitConnection {
  private static final Object CLOSED = new Object();

  private final Channel channel;
  private final Inbox inbox;
  private final long timeoutMs;
  /** CLOSE requests sent whose answers are not read yet (the owner's thread only). */
  private int unanswered;

  /**
   * The result of an OPEN: errorCode null on success; sums, the stored checksums from chunk 0 the worker
   * sent with it (null when it sent none: ask {@link #checksums}).
   */
  record Opened(long length, String tier, String path, boolean memoryBacked, int[] sums, byte[] inline,
      String errorCode, String errorMessage) {}

  /** Collects what the worker sends: responses, descriptors, and the end of the connection. */
  static final class Inbox extends ChannelInboundHandlerAdapter {
    final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
      if (msg instanceof FileDescriptor) {
        queue.add(msg);
        return;
      }
      try {
        queue.add(ShortCircuitResponse.parseFrom(new ByteBufInputStream((ByteBuf) msg)));
      } catch (IOException e) {
        queue.add(e);
      } finally {
        ReferenceCountUtil.release(msg);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      queue.add(CLOSED);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      queue.add(cause);
      ctx.close();
    }
  }

  ShortCircuitConnection(Channel channel, Inbox inbox, long timeoutMs) {
    this.channel = channel;
    this.inbox = inbox;
    this.timeoutMs = timeoutMs;
  }

  boolean isActive() {
    return channel.isActive();
  }

  /**
   * Opens a block; with {@code inlineMax} above 0 a block of at most that many bytes comes back in the answer
   * ({@link Opened#inline()}, checked to hold exactly its length) and is not left open at the worker.
   */
  Opened open(long blockId, boolean promote, int inlineMax) throws IOException {
    ShortCircuitResponse r = call(ShortCircuitRequest.newBuilder().setOpen(OpenBlockProto.newBuilder()
        .setBlockId(blockId).setPromote(promote).setWithChecksums(true).setInlineMax(inlineMax)).build());
    if (!r.getErrorCode().isEmpty()) {
      return new Opened(0, "", "", false, null, null, r.getErrorCode(), r.getErrorMessage());
    }
    byte[] inline = null;
    if (r.getInlined()) {
      if (r.getData().size() != r.getLength()) {
        close();
        throw new IOException("the worker sent " + r.getData().size() + " bytes of block " + blockId + ", which has "
            + r.getLength());
      }
      inline = r.getData().toByteArray();
    }
    int[] sums = null;
    if (r.getBytesPerChecksum() == io.strata.common.checksum.ChunkChecksums.CHUNK_BYTES) {
      sums = new int[r.getChunkCrc32CCount()];
      for (int i = 0; i < sums.length; i++) {
        sums[i] = r.getChunkCrc32C(i);
      }
    }
    return new Opened(r.getLength(), r.getTier(), r.getPath(), r.getMemoryBacked(), sums, inline, null, null);
  }

  /** Asks for the descriptor of a block opened on this connection and opens a channel on it. */
  FileChannel receiveDescriptor(long blockId) throws IOException {
    return receiveDescriptor(blockId, false);
  }

  /**
   * Asks for the descriptor of a block opened (or, with {@code write}, of a temp block created) on this
   * connection and opens a channel on it, read-only or for writing.
   */
  FileChannel receiveDescriptor(long blockId, boolean write) throws IOException {
    drainUnanswered(); // no answer may arrive while the socket reads descriptors
    channel.config().setOption(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.FILE_DESCRIPTORS);
    Object got;
    try {
      send(ShortCircuitRequest.newBuilder().setSendFd(SendFdProto.newBuilder().setBlockId(blockId).setWrite(write))
          .build());
      got = take();
    } finally {
      channel.config().setOption(EpollChannelOption.DOMAIN_SOCKET_READ_MODE, DomainSocketReadMode.BYTES);
    }
    if (!(got instanceof FileDescriptor)) {
      throw new IOException("the worker sent " + got + " instead of the descriptor of block " + blockId);
    }
    FileDescriptor fd = (FileDescriptor) got;
    try {
      // The magic link reaches the open file itself: no lookup through the worker's dirs, so it works
      // where those dirs are not visible or traversable here.
      Path file = Path.of("/proc/self/fd/" + fd.intValue());
      return write ? openForWrite(file) : FileChannel.open(file, StandardOpenOption.READ);
    } finally {
      fd.close();
    }
  }

  /**
   * A temp block file opened for writing, and for reading too when its mode lets this process read it (so a
   * writer can read back what it wrote when its worker fails).
   */
  static FileChannel openForWrite(Path file) throws IOException {
    try {
      return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    } catch (java.nio.file.AccessDeniedException e) {
      return FileChannel.open(file, StandardOpenOption.WRITE);
    }
  }

  /**
   * The stored checksums of chunks [first, first + count) of a block open on this connection, asked for
   * in frames of at most a few thousand; an error answer is thrown as the exception its code names.
   */
  int[] checksums(long blockId, int first, int count) throws IOException {
    int[] out = new int[count];
    int done = 0;
    while (done < count) {
      ShortCircuitResponse r = call(ShortCircuitRequest.newBuilder().setGetChecksums(
          io.strata.proto.GetChecksumsProto.newBuilder().setBlockId(blockId).setFirstChunk(first + done)
              .setCount(count - done)).build());
      if (!r.getErrorCode().isEmpty()) {
        throw io.strata.common.exception.ErrorCode.valueOf(r.getErrorCode()).toException(r.getErrorMessage(), null);
      }
      if (r.getChunkCrc32CCount() == 0) {
        throw new IOException("the worker sent no checksums for chunk " + (first + done) + " of block " + blockId);
      }
      if (r.getBytesPerChecksum() != io.strata.common.checksum.ChunkChecksums.CHUNK_BYTES) {
        throw new IOException("the worker's checksum chunks are " + r.getBytesPerChecksum() + " bytes, not "
            + io.strata.common.checksum.ChunkChecksums.CHUNK_BYTES);
      }
      for (int i = 0; i < r.getChunkCrc32CCount() && done < count; i++) {
        out[done++] = r.getChunkCrc32C(i);
      }
    }
    return out;
  }

  /**
   * Releases the worker's read lock on the block, without waiting for the answer (read before the next
   * call's); errors only drop the connection (which releases it too).
   */
  void closeQuietly(long blockId) {
    if (!channel.isActive()) {
      return; // the worker released everything when the connection ended
    }
    try {
      send(ShortCircuitRequest.newBuilder().setClose(CloseBlockProto.newBuilder().setBlockId(blockId)).build());
      unanswered++;
    } catch (IOException e) {
      close();
    }
  }

  /** Reads the answers of the CLOSEs sent so far; an error answer to one only means the block was not open. */
  private void drainUnanswered() throws IOException {
    while (unanswered > 0) {
      unanswered--;
      ShortCircuitResponse r = response(take());
      if (!r.getErrorCode().isEmpty()) {
        org.slf4j.LoggerFactory.getLogger(ShortCircuitConnection.class).debug("A short-circuit CLOSE was answered "
            + "{}: {}", r.getErrorCode(), r.getErrorMessage());
      }
    }
  }

  /** Sends one request and waits for its one response (an error answer is a response too). */
  ShortCircuitResponse call(ShortCircuitRequest req) throws IOException {
    drainUnanswered();
    send(req);
    return response(take());
  }

  private ShortCircuitResponse response(Object got) throws IOException {
    if (got instanceof ShortCircuitResponse) {
      return (ShortCircuitResponse) got;
    }
    if (got instanceof FileDescriptor) {
      ((FileDescriptor) got).close();
    }
    close();
    throw new IOException("the worker sent " + got + " instead of a response");
  }

  /**
   * Hands the request to the event loop without waiting for it to be written: a failed write closes the
   * connection, which the waiting {@link #take} sees.
   */
  private void send(ShortCircuitRequest req) throws IOException {
    if (!channel.isActive()) {
      throw new IOException("the worker closed the domain socket connection");
    }
    channel.writeAndFlush(Unpooled.wrappedBuffer(req.toByteArray())).addListener(f -> {
      if (!f.isSuccess()) {
        inbox.queue.add(new IOException("cannot send to the worker's domain socket: " + f.cause(), f.cause()));
        channel.close();
      }
    });
  }

  private Object take() throws IOException {
    Object got;
    try {
      got = inbox.queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new InterruptedIOException("interrupted waiting for the worker's domain socket");
    }
    if (got == null) {
      close();
      throw new IOException("the worker answered nothing on its domain socket for " + timeoutMs + " ms");
    }
    if (got == CLOSED) {
      inbox.queue.add(CLOSED);
      throw new IOException("the worker closed the domain socket connection");
    }
    if (got instanceof Throwable) {
      close();
      throw new IOException("the domain socket connection failed: " + got, (Throwable) got);
    }
    return got;
  }

  void close() {
    channel.close();
  }
}

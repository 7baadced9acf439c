package io.strata.worker.transfer;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.internal.PlatformDependent;
import io.strata.worker.store.BlockStore;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The way of putting a block file's range on a transfer connection other than sendfile
 * (strata.worker.transfer.send=mmap): {@link #mapped} writes from read-only mappings of the range (the kernel
 * copies once from the page cache into the socket, as a plain write from a user buffer). It returns the
 * future of the last write and closes the block's read handle (its read lock) when that completes,
 * successfully or not; a mapping is unmapped as soon as its own write completes or fails, never while the
 * transport may still read it. (Reading the range into pooled direct buffers and writing those was measured
 * too, and won nothing: docs/PERFORMANCE.md.)
 *
 * <p>Stateless; called on a connection's handler thread (the writes run on its event loop).
 */
final class BlockSends {
  /** Bytes per mapping: a range is mapped and unmapped in pieces of at most this. */
  static final long MAP_BYTES = 16L << 20;

  private BlockSends() {}

  /** Writes the range from mappings of at most {@link #MAP_BYTES}, each unmapped once written. */
  static ChannelFuture mapped(ChannelHandlerContext ctx, BlockStore.ReadHandle handle, long start, long count) {
    ChannelFuture last = null;
    try {
      for (long pos = start, end = start + count; pos < end; pos += MAP_BYTES) {
        MappedByteBuffer m = handle.channel().map(FileChannel.MapMode.READ_ONLY, pos, Math.min(MAP_BYTES, end - pos));
        // Netty completes a write's future after the bytes left (or it dropped the message): only then unmap.
        last = ctx.write(Unpooled.wrappedBuffer(m)).addListener(f -> PlatformDependent.freeDirectBuffer(m));
      }
    } catch (IOException | RuntimeException e) {
      // Pieces already queued would leave the stream out of step: end the connection (their writes fail and
      // unmap them); the client sees the bytes fall short.
      ctx.close();
      handle.close();
      return ctx.newFailedFuture(e);
    }
    ctx.flush();
    last.addListener(f -> handle.close());
    return last;
  }
}

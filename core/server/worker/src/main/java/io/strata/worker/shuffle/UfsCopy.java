package io.strata.worker.shuffle;

import io.strata.worker.store.BlockStore;
import io.strata.worker.ufs.MasterClient;
import io.strata.worker.ufs.UfsFileWrite;
import io.strata.worker.ufs.UfsOperations;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Writes a sealed partition copy's blocks, in order, as its file's under file system copy (CACHE_THROUGH at the
 * seal): the copy is completed only when every block was read whole and the bytes add up to the length the copy
 * was sealed with, else aborted (nothing half-written stays visible in the UFS).
 *
 * <p>Stateless; runs on the calling (seal) thread and blocks for the store's reads and the UFS writes.
 */
final class UfsCopy {
  private UfsCopy() {}

  /**
   * Copies blocks {@code blockIds} of {@code store} (each read-locked while read) to the UFS file of
   * {@code fileId}, at {@code target} (the master named it for this write already) or, when null, where the master
   * names now; {@code total} is the length they must add up to, {@code describe} names the copy in errors.
   */
  static void write(BlockStore store, UfsOperations ufs, long fileId, MasterClient.UfsTarget target,
      List<Long> blockIds, long total, String describe) throws IOException {
    UfsFileWrite out = target != null ? ufs.openFileWrite(fileId, target) : ufs.openFileWrite(fileId);
    try {
      // Sized to the copy: most partition files are a few KiB, and zeroing a 1 MiB array for each was a quarter of
      // a seal thread's time in the UFS copy (async-profiler, 32x1000 shuffle bench).
      ByteBuffer buf = ByteBuffer.allocate((int) Math.max(4096, Math.min(1 << 20, total)));
      long copied = 0;
      for (long id : blockIds) {
        try (BlockStore.ReadHandle h = store.openForRead(id, false)) {
          long pos = 0;
          long len = h.meta().length();
          while (pos < len) {
            buf.clear().limit((int) Math.min(buf.capacity(), len - pos));
            int n = h.channel().read(buf, pos);
            if (n < 0) {
              throw new IOException("Block " + id + " of " + describe + " ended at " + pos + " of " + len);
            }
            pos += n;
            buf.flip();
            out.write(buf);
          }
          copied += len;
        }
      }
      if (copied != total) {
        throw new IOException(describe + ": its blocks hold " + copied + " bytes, " + total + " were appended");
      }
      out.complete();
    } catch (IOException | RuntimeException e) {
      out.abort();
      throw e;
    }
  }
}

package io.strata.client;

import io.strata.client.shortcircuit.ShortCircuitClient;
import io.strata.common.checksum.ChunkChecksums;
import io.strata.common.net.WorkerAddress;
import java.io.IOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The blocks one {@link FileInStream}'s positioned reads read short-circuit, kept open (and read-locked on their
 * workers), least recently read first out, at most {@link ClientKeys#SHORT_CIRCUIT_PREAD_BLOCKS_KEPT}; a block
 * leaves when a read fails on it ({@link #drop}) or the stream closes ({@link #closeAll}). A pread in a kept
 * block costs no socket round trip, where opening the block costs four (open, descriptor, checksums, close);
 * the whole block's checksums are fetched once when it is kept.
 *
 * <p>Not thread-safe: its stream's one reader.
 */
final class KeptBlocks {
  private static final Logger LOG = LoggerFactory.getLogger(KeptBlocks.class);

  /** Chooses the worker to read a block from (only asked when the block is not kept). */
  @FunctionalInterface
  interface Chooser {
    WorkerAddress choose() throws IOException;
  }

  private record Kept(WorkerAddress worker, ShortCircuitClient.OpenBlock open, int[] sums) {}

  private final FileSystemContext context;
  private final boolean promote;
  private final int keepAtMost;
  private final LinkedHashMap<Long, Kept> kept = new LinkedHashMap<>(16, 0.75f, true);

  KeptBlocks(FileSystemContext context, boolean promote) {
    this.context = context;
    this.promote = promote;
    this.keepAtMost = context.conf().get(ClientKeys.SHORT_CIRCUIT_PREAD_BLOCKS_KEPT);
  }

  /**
   * A reader of the range from the block kept open, opening it (and closing the least recently read one past
   * the limit) when the chosen copy is on this host's worker; null to read it the usual way (another host,
   * short-circuit not possible: {@link FileInStream} says why).
   */
  BlockRangeReader reader(FileBlockInfo block, long offset, long length, Chooser chooser) throws IOException {
    if (keepAtMost == 0) {
      return null;
    }
    Kept k = kept.get(block.blockId());
    if (k == null) {
      WorkerAddress chosen = chooser.choose();
      if (chosen == null || !context.onThisHost(chosen)) {
        return null;
      }
      ShortCircuitClient.OpenBlock opened = context.shortCircuit().open(chosen, block.blockId(), promote,
          BlockCopies.inlineMax(context, block));
      if (opened == null) {
        return null;
      }
      int[] sums = null;
      try {
        if (opened.length() != block.length()) {
          throw new IOException("the worker holds " + opened.length() + " bytes, the master lists " + block.length());
        }
        if (context.conf().get(ClientKeys.SHORT_CIRCUIT_CHECKSUM_VERIFY) && block.length() > 0) {
          sums = opened.checksums(0, ChunkChecksums.chunkCount(block.length()));
        }
      } catch (IOException e) {
        LOG.debug("Block {} on {} not kept open for positioned reads ({}); reading it the usual way",
            block.blockId(), chosen, e.toString());
        opened.close();
        return null;
      }
      k = new Kept(chosen, opened, sums);
      kept.put(block.blockId(), k);
      if (kept.size() > keepAtMost) {
        Iterator<Map.Entry<Long, Kept>> eldest = kept.entrySet().iterator();
        eldest.next().getValue().open().close();
        eldest.remove();
      }
    }
    return ShortCircuitBlockReader.ofKept(k.open(), k.worker(), offset, length, k.sums());
  }

  /** Closes the kept block {@code blockId}, if kept. */
  void drop(long blockId) {
    Kept k = kept.remove(blockId);
    if (k != null) {
      k.open().close();
    }
  }

  /** Closes every kept block (their workers' read locks are released). */
  void closeAll() {
    for (Kept k : kept.values()) {
      k.open().close();
    }
    kept.clear();
  }
}

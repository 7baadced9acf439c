package io.strata.shuffle;

import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;
import org.apache.spark.io.LZ4CompressionCodec;

/**
 * The codecs a map task compresses its batches with: Spark's configured codec, and for LZ4 (Spark's default) the
 * same codec with smaller blocks for small batches. An LZ4 stream allocates two buffers of its block size when it
 * is made (32 KiB each by default), and a map task of a thousand-partition shuffle makes one per batch for batches
 * of a few hundred bytes: 64 MiB of zeroed buffers a task for 160 KiB of data. Readers need nothing of this: an
 * LZ4 stream names each block's size, and Spark's LZ4 input stream reads any.
 *
 * <p>Immutable and thread-safe (Spark's codecs are); one per process.
 */
final class BatchCodecs {
  /** Block sizes offered to small batches, smallest first. */
  static final int[] SMALL_BLOCKS = {1 << 10, 4 << 10, 16 << 10};

  private final CompressionCodec codec;
  /** LZ4 with the first of {@link #SMALL_BLOCKS} (those below the configured block), or empty when not LZ4. */
  private final CompressionCodec[] small;

  BatchCodecs(SparkConf conf) {
    this.codec = CompressionCodec.createCodec(conf);
    long block = conf.getSizeAsBytes("spark.io.compression.lz4.blockSize", "32k");
    int n = 0;
    while (codec instanceof LZ4CompressionCodec && n < SMALL_BLOCKS.length && SMALL_BLOCKS[n] < block) {
      n++;
    }
    this.small = new CompressionCodec[n];
    for (int i = 0; i < n; i++) {
      small[i] = new LZ4CompressionCodec(conf.clone().set("spark.io.compression.lz4.blockSize",
          SMALL_BLOCKS[i] + "b"));
    }
  }

  /** The codec for a batch of {@code length} bytes before compression. */
  CompressionCodec forBatch(int length) {
    for (int i = 0; i < small.length; i++) {
      if (length <= SMALL_BLOCKS[i]) {
        return small[i];
      }
    }
    return codec;
  }
}

package io.strata.shuffle;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.apache.spark.SparkConf;
import org.apache.spark.io.CompressionCodec;
import org.junit.jupiter.api.Test;

/**
 * Small batches are compressed with LZ4 blocks sized to them ({@link BatchCodecs}), and what that writes reads back
 * with Spark's own LZ4 codec as configured; other codecs, and batches past the small sizes, use Spark's codec.
 */
class BatchCodecsTest {
  private static byte[] compress(CompressionCodec c, byte[] data) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (OutputStream s = c.compressedOutputStream(out)) {
      s.write(data);
    }
    return out.toByteArray();
  }

  private static byte[] decompress(CompressionCodec c, byte[] data) throws Exception {
    try (InputStream s = c.compressedInputStream(new java.io.ByteArrayInputStream(data))) {
      return s.readAllBytes();
    }
  }

  /** The block size an LZ4 block stream was written with: its token's level (log2 of the size, less 10). */
  private static int lz4Block(byte[] compressed) {
    assertThat(new String(compressed, 0, 8, StandardCharsets.US_ASCII)).isEqualTo("LZ4Block");
    return 1 << (10 + (compressed[8] & 0x0F));
  }

  @Test
  void smallBatches_getSmallLz4Blocks_andReadBackWithSparksCodec() throws Exception {
    SparkConf conf = new SparkConf(false);
    BatchCodecs codecs = new BatchCodecs(conf);
    CompressionCodec spark = CompressionCodec.createCodec(conf);
    for (int size : new int[] {0, 200, 1024, 1025, 3000, 16 << 10, (16 << 10) + 1, 100_000}) {
      byte[] data = new byte[size];
      for (int i = 0; i < size; i++) {
        data[i] = (byte) ((i * 31) ^ (i >> 7)); // compressible, not constant
      }
      byte[] packed = compress(codecs.forBatch(size), data);
      int want = size <= 1024 ? 1024 : size <= 4096 ? 4096 : size <= 16384 ? 16384 : 32768;
      assertThat(lz4Block(packed)).as("block size for a batch of %d bytes", size).isEqualTo(want);
      assertThat(decompress(spark, packed)).isEqualTo(data);
    }
  }

  @Test
  void otherCodecs_andSmallerConfiguredBlocks_areLeftAlone() throws Exception {
    BatchCodecs zstd = new BatchCodecs(new SparkConf(false).set("spark.io.compression.codec", "zstd"));
    assertThat(zstd.forBatch(200).getClass().getSimpleName()).isEqualTo("ZStdCompressionCodec");
    BatchCodecs lz4At2k = new BatchCodecs(new SparkConf(false).set("spark.io.compression.lz4.blockSize", "2k"));
    assertThat(lz4Block(compress(lz4At2k.forBatch(200), new byte[200]))).isEqualTo(1024);
    assertThat(lz4Block(compress(lz4At2k.forBatch(3000), new byte[3000]))).isEqualTo(2048); // the configured size
  }
}

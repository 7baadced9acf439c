package io.strata.client.shortcircuit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A block file's mapping on a real file: the bytes it copies, and the unmap that waits for the accesses in
 * flight (a close racing a read unmaps when that read exits; later reads are refused, never a crash).
 */
class BlockMappingTest {
  @TempDir
  Path dir;

  private static List<String> mappingsOf(Path p) throws IOException {
    String name = p.toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.endsWith(" " + name)).toList();
  }

  /** A file of {@code n} random bytes (from {@code seed}); its bytes in {@code data[0]}. */
  private Path file(int n, long seed, byte[][] data) throws IOException {
    data[0] = new byte[n];
    new Random(seed).nextBytes(data[0]);
    Path f = dir.resolve("block");
    Files.write(f, data[0]);
    return f;
  }

  @Test
  void copiesAndSlices_theFilesBytes() throws IOException {
    byte[][] d = new byte[1][];
    Path f = file(200_000, 3, d);
    byte[] data = d[0];
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      BlockMapping m = BlockMapping.map(ch, data.length, 1);
      assertThat(m).isNotNull();
      assertThat(m.enter()).isTrue();
      byte[] out = new byte[1000];
      m.copy(65_000, out, 0, out.length);
      assertThat(out).isEqualTo(java.util.Arrays.copyOfRange(data, 65_000, 66_000));
      assertThat(m.slice(10, 5).get(4)).isEqualTo(data[14]);
      m.exit();
      m.close();
    }
  }

  @Test
  void aFileShorterThanItsBlock_isNotMapped_soTheReaderReadsItByChannel() throws IOException {
    byte[][] d = new byte[1][];
    Path f = file(100_000, 5, d);
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      // A damaged copy: the worker lists 200,000 bytes. Mapped, a read past 100,000 would fault (SIGBUS).
      assertThat(BlockMapping.map(ch, 200_000, 1)).isNull();
      assertThat(mappingsOf(f)).isEmpty();
    }
  }

  @Test
  void closeDuringAnAccess_unmapsWhenItExits_andRefusesLaterAccesses() throws IOException {
    byte[][] d = new byte[1][];
    Path f = file(100_000, 4, d);
    byte[] data = d[0];
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      BlockMapping m = BlockMapping.map(ch, data.length, 2);
      assertThat(mappingsOf(f)).hasSize(1);
      assertThat(m.enter()).isTrue();
      m.close(); // as another thread closing the stream would
      assertThat(mappingsOf(f)).as("still mapped: an access is in flight").hasSize(1);
      byte[] out = new byte[10];
      m.copy(99_990, out, 0, 10);
      assertThat(out).isEqualTo(java.util.Arrays.copyOfRange(data, 99_990, 100_000));
      m.exit();
      assertThat(mappingsOf(f)).as("the last access out unmapped it").isEmpty();
      assertThat(m.enter()).isFalse();
      m.close(); // a second close is nothing
    }
  }

  @Test
  void closeWithNoAccess_unmapsAtOnce_andNothingIsMappedForAnEmptyOrHugeLength() throws IOException {
    Path f = file(4096, 5, new byte[1][]);
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      BlockMapping m = BlockMapping.map(ch, 4096, 3);
      assertThat(mappingsOf(f)).hasSize(1);
      m.close();
      assertThat(mappingsOf(f)).isEmpty();
      assertThat(BlockMapping.map(ch, 0, 4)).isNull();
      assertThat(BlockMapping.map(ch, 1L << 31, 5)).isNull();
    }
  }
}

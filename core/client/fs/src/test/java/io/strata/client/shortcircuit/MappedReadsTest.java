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
 * The key's values, and the probe that {@code auto} runs on a real file: it times both ways over the same bytes
 * and leaves no mapping behind.
 */
class MappedReadsTest {
  @TempDir
  Path dir;

  @Test
  void parse_takesAutoTrueFalse_inAnyCase_andNothingElse() {
    assertThat(MappedReads.Mode.parse("auto")).isEqualTo(MappedReads.Mode.AUTO);
    assertThat(MappedReads.Mode.parse(" AUTO ")).isEqualTo(MappedReads.Mode.AUTO);
    assertThat(MappedReads.Mode.parse("true")).isEqualTo(MappedReads.Mode.MAP);
    assertThat(MappedReads.Mode.parse("False")).isEqualTo(MappedReads.Mode.CHANNEL);
    assertThat(MappedReads.Mode.parse("yes")).isNull();
    assertThat(MappedReads.Mode.parse("")).isNull();
  }

  @Test
  void probe_timesAMappedCopyAndAChannelRead_andUnmapsWhatItMapped() throws IOException {
    byte[] data = new byte[3 << 20];
    new Random(5).nextBytes(data);
    Path f = dir.resolve("block");
    Files.write(f, data);
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      long[] ns = MappedReads.probe(ch, data.length);
      assertThat(ns).hasSize(2);
      assertThat(ns[0]).as("mapped copy ns").isPositive().isLessThan(10_000_000_000L);
      assertThat(ns[1]).as("channel read ns").isPositive().isLessThan(10_000_000_000L);
      assertThat(mappingsOf(f)).as("every probe mapping released").isEmpty();
    }
  }

  @Test
  void probe_ofAFileShorterThanAsked_failsNamingWhereItEnded() throws IOException {
    Path f = dir.resolve("short");
    Files.write(f, new byte[100_000]);
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> MappedReads.probe(ch, 200_000))
          .isInstanceOf(IOException.class).hasMessageContaining("ended at 100000 of 200000");
    }
  }

  @Test
  void findingBeforeAnyBlock_isUndecided() {
    MappedReads m = new MappedReads(MappedReads.Mode.AUTO);
    assertThat(m.finding()).startsWith("undecided: ");
    assertThat(m.mode()).isEqualTo(MappedReads.Mode.AUTO);
  }

  private static List<String> mappingsOf(Path p) throws IOException {
    String name = p.toRealPath().toString();
    return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.endsWith(" " + name)).toList();
  }
}

package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class ProgressTest {
  /** A clock the test moves. */
  private static final class StepClock extends Clock {
    long ms;

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(ms);
    }
  }

  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private final StepClock clock = new StepClock();

  private CliContext context(boolean show) {
    return new CliContext(StrataConf.defaults(), System.in, new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(err, true, StandardCharsets.UTF_8), clock, ZoneOffset.UTC, false, c -> null).showProgress(show);
  }

  @Test
  void drawsBytesRateAndEta_inPlace_atMostEveryRedrawInterval() {
    Progress p = Progress.start(context(true), "/big", 40L << 20);
    p.advance(10L << 20); // at t=0: drawn
    clock.ms = 50;
    p.advance(1L << 20); // too soon: not drawn
    clock.ms = 1000;
    p.advance(9L << 20); // 20 MiB in 1 s: half done, 20 MiB/s, 1 s left
    assertThat(p.line(1000)).isEqualTo("/big [############            ]  50% 20.0 MiB/40.0 MiB  20.0 MiB/s  ETA 0:01");
    clock.ms = 2000;
    p.advance(20L << 20);
    p.finish();
    String text = err.toString(StandardCharsets.UTF_8);
    assertThat(text.split("\r", -1)).hasSize(1 + 4); // three redraws and the final one
    assertThat(text).contains(" 100% 40.0 MiB/40.0 MiB  20.0 MiB/s").doesNotContain("ETA 0:00").endsWith("\n");
  }

  @Test
  void anUnknownTotalShowsBytesAndRateOnly() {
    Progress p = Progress.start(context(true), "-", -1);
    clock.ms = 2000;
    p.advance(3L << 20);
    assertThat(p.line(2000)).isEqualTo("- 3.0 MiB  1.5 MiB/s");
  }

  @Test
  void printsNothingWhenStderrIsNotATerminal() {
    Progress p = Progress.start(context(false), "/big", 100);
    p.advance(100);
    p.finish();
    assertThat(p).isSameAs(Progress.NONE);
    assertThat(err.size()).isZero();
  }

  @Test
  void aManyFileBar_countsFilesAndBytes_andALinePrintedMeanwhileGoesAboveIt() {
    ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
    Progress p = Progress.start(context(true), "/dir", 30L << 20, 3); // drawn at once
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("\r/dir [").contains("0/3 files");
    clock.ms = 1000;
    p.advance(10L << 20);
    p.fileDone();
    assertThat(p.line(1000))
        .isEqualTo("/dir [########                ]  33% 10.0 MiB/30.0 MiB  1/3 files  10.0 MiB/s  ETA 0:02");
    err.reset();
    p.println(out, "Loaded /dir/a");
    assertThat(outBytes.toString(StandardCharsets.UTF_8)).isEqualTo("Loaded /dir/a" + System.lineSeparator());
    // the bar's line is cleared before the line and drawn again after it
    assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("\r\u001b[K\r/dir [########").contains("1/3 files");
    clock.ms = 3000;
    p.advance(20L << 20);
    p.fileDone();
    p.fileDone();
    p.finish();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .endsWith("/dir [########################] 100% 30.0 MiB/30.0 MiB  3/3 files  10.0 MiB/s\u001b[K\n");
  }

  @Test
  void aSingleFileBar_countsNoFiles() {
    Progress p = Progress.start(context(true), "/f", 1L << 20);
    clock.ms = 1000;
    p.advance(1L << 20);
    p.fileDone();
    assertThat(p.line(1000)).isEqualTo("/f [########################] 100% 1.0 MiB/1.0 MiB  1.0 MiB/s");
  }

  @Test
  void aManyFileBarIsNotDrawnEither_whenStderrIsNotATerminal() {
    Progress p = Progress.start(context(false), "/dir", 100, 2);
    p.advance(100);
    p.fileDone();
    p.println(new PrintStream(new ByteArrayOutputStream()), "Loaded /dir/a");
    p.finish();
    assertThat(p).isSameAs(Progress.NONE);
    assertThat(err.size()).isZero();
  }
}

package io.strata.cli;

import java.io.PrintStream;
import java.time.Clock;
import java.util.Locale;

/**
 * The progress bar of one long copy ({@code put}, {@code get} and their aliases): bytes done of the total,
 * the rate and the time left, redrawn in place on stderr at most every {@value #REDRAW_MS} ms and once at
 * the end. Shown only when the run was told stderr is a terminal ({@code bin/strata} checks {@code [ -t 2 ]}
 * and sets {@code -Dstrata.cli.progress=true}); otherwise {@link #NONE}, which prints nothing, so scripts
 * and pipes see no control characters.
 *
 * <p>Not thread-safe: one copy, one thread.
 */
class Progress {
  static final long REDRAW_MS = 200;
  private static final int BAR = 24;

  /** A copy nobody watches: prints nothing. */
  static final Progress NONE = new Progress(null, null, "", -1);

  private final PrintStream err;
  private final Clock clock;
  private final String name;
  private final long total;
  private final long startMs;
  private long done;
  private long drawnMs = -1;

  private Progress(PrintStream err, Clock clock, String name, long total) {
    this.err = err;
    this.clock = clock;
    this.name = name;
    this.total = total;
    this.startMs = clock == null ? 0 : clock.millis();
  }

  /** The bar of a copy of {@code total} bytes ({@code -1}: unknown, as for stdin) named {@code name}. */
  static Progress start(CliContext ctx, String name, long total) {
    return ctx.showProgress() ? new Progress(ctx.err(), ctx.clock(), name, total) : NONE;
  }

  /** {@code n} more bytes copied. */
  void advance(long n) {
    if (err == null) {
      return;
    }
    done += n;
    long now = clock.millis();
    if (drawnMs < 0 || now - drawnMs >= REDRAW_MS) {
      draw(now);
    }
  }

  /** The copy ended (done or failed): the last state and a newline. */
  void finish() {
    if (err == null) {
      return;
    }
    draw(clock.millis());
    err.print('\n');
    err.flush();
  }

  private void draw(long now) {
    drawnMs = now;
    err.print('\r');
    err.print(line(now));
    err.print("\u001b[K"); // clear what a longer earlier line left
    err.flush();
  }

  /** The text of the bar at {@code now}. */
  String line(long now) {
    double secs = Math.max(0.001, (now - startMs) / 1000.0);
    double rate = done / secs;
    StringBuilder b = new StringBuilder(name).append(' ');
    if (total > 0) {
      int filled = (int) Math.min(BAR, done * BAR / total);
      b.append('[').append("#".repeat(filled)).append(" ".repeat(BAR - filled)).append("] ");
      b.append(String.format(Locale.ROOT, "%3d%% ", Math.min(100, done * 100 / total)));
      b.append(mib(done)).append('/').append(mib(total));
    } else {
      b.append(mib(done));
    }
    b.append(String.format(Locale.ROOT, "  %.1f MiB/s", rate / (1 << 20)));
    if (total > 0 && done < total && rate > 0) {
      long left = (long) Math.ceil((total - done) / rate);
      b.append(String.format(Locale.ROOT, "  ETA %d:%02d", left / 60, left % 60));
    }
    return b.toString();
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1 << 20));
  }
}

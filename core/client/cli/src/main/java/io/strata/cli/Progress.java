package io.strata.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.Locale;

/**
 * The progress bar of one long transfer: a file's copy ({@code put}, {@code get} and their aliases), or one bar
 * over many files (a directory's copy, {@code load}, {@code persist}) that also counts the files done of the
 * total. It shows bytes done of the total, the rate and the time left, redrawn in place on stderr at most every
 * {@value #REDRAW_MS} ms and once at the end; lines a command prints meanwhile go through {@link #println}, which
 * clears the bar, prints the line and draws the bar again below it. Shown only when the run was told stderr
 * is a terminal ({@code bin/strata} checks {@code [ -t 2 ]} and sets {@code -Dstrata.cli.progress=true});
 * otherwise {@link #NONE}, which prints nothing, so scripts and pipes see no control characters.
 *
 * <p>Not thread-safe: one command, one thread.
 */
class Progress {
  static final long REDRAW_MS = 200;
  private static final int BAR = 24;

  /** A copy nobody watches: prints nothing. */
  static final Progress NONE = new Progress(null, null, "", -1, -1);

  private final PrintStream err;
  private final Clock clock;
  private final String name;
  private final long total;
  /** The files of a many-file bar, or -1 for one file's bar (no count shown). */
  private final int totalFiles;
  private final long startMs;
  private long done;
  private int filesDone;
  private long drawnMs = -1;

  private Progress(PrintStream err, Clock clock, String name, long total, int totalFiles) {
    this.err = err;
    this.clock = clock;
    this.name = name;
    this.total = total;
    this.totalFiles = totalFiles;
    this.startMs = clock == null ? 0 : clock.millis();
  }

  /** The bar of a copy of {@code total} bytes ({@code -1}: unknown, as for stdin) named {@code name}. */
  static Progress start(CliContext ctx, String name, long total) {
    return ctx.showProgress() ? new Progress(ctx.err(), ctx.clock(), name, total, -1) : NONE;
  }

  /**
   * One bar over {@code files} files of {@code total} bytes in all, named {@code name}; it is drawn at once (a
   * {@code persist} may wait long before its first file is done). Call {@link #fileDone} after each file.
   */
  static Progress start(CliContext ctx, String name, long total, int files) {
    if (!ctx.showProgress()) {
      return NONE;
    }
    Progress p = new Progress(ctx.err(), ctx.clock(), name, total, files);
    p.draw(p.startMs);
    return p;
  }

  /**
   * One bar over the regular files under the local directory {@code dir} (counted first; only when the bar is
   * shown). Files the walk cannot read are left out of the totals (their copy reports them).
   */
  static Progress startTree(CliContext ctx, String name, Path dir) {
    if (!ctx.showProgress()) {
      return NONE;
    }
    long[] totals = new long[2];
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path f, BasicFileAttributes a) {
          if (a.isRegularFile()) {
            totals[0] += a.size();
            totals[1]++;
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path f, IOException e) {
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      ctx.debugTrace(e); // totals as far as the walk got
    }
    return start(ctx, name, totals[0], (int) totals[1]);
  }

  /** One more file of a many-file bar is done (its bytes were counted by {@link #advance}). */
  void fileDone() {
    if (err == null || totalFiles < 0) {
      return; // one file's bar counts no files
    }
    filesDone++;
    long now = clock.millis();
    if (now - drawnMs >= REDRAW_MS) {
      draw(now);
    }
  }

  /**
   * Prints {@code line} on {@code out} without breaking the bar: clears the bar's line first and draws it again
   * after (both streams may be the same terminal). Without a bar just prints it.
   */
  void println(PrintStream out, String line) {
    aside(() -> {
      out.println(line);
      out.flush();
    });
  }

  /** Runs {@code print} (which prints whole lines, a failure's report) with the bar cleared, then draws it again. */
  void aside(Runnable print) {
    if (err == null || drawnMs < 0) {
      print.run();
      return;
    }
    err.print("\r\u001b[K");
    err.flush();
    print.run();
    err.flush();
    draw(clock.millis());
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
    if (totalFiles >= 0) {
      b.append("  ").append(filesDone).append('/').append(totalFiles).append(totalFiles == 1 ? " file" : " files");
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

package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a client main in its own process inside a private mount namespace ({@code unshare -m}) where a
 * tmpfs hides a worker's tier dir, so the client cannot reach the worker's block files by path (root ignores
 * permissions, so an untraversable dir would prove nothing here). The short-circuit tests use it to show
 * descriptor passing works where path mode cannot.
 */
final class HiddenTierDir {
  private HiddenTierDir() {}

  /** Runs {@code main} with {@code args}; returns its one output line starting {@code sha256=}. */
  static String run(Path tierDir, Class<?> main, String... args) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String cmd = "mount -t tmpfs none '" + tierDir + "' && exec '" + java
        + "' -Dio.netty.native.detectNativeLibraryDuplicates=false -cp '" + System.getProperty("java.class.path")
        + "' " + main.getName() + " '" + String.join("' '", args) + "'";
    Process p = new ProcessBuilder(List.of("unshare", "-m", "--propagation", "private", "sh", "-c", cmd))
        .redirectErrorStream(true).start();
    List<String> lines = new ArrayList<>();
    try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream()))) {
      for (String line; (line = r.readLine()) != null; ) {
        lines.add(line);
      }
    }
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join("\n", lines)).isZero();
    return lines.stream().filter(l -> l.startsWith("sha256=")).findFirst()
        .orElseThrow(() -> new AssertionError("no result line in:\n" + String.join("\n", lines)));
  }
}

package io.strata.tests;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The module layering of DESIGN.md, checked on the sources: common knows no client or server code; the
 * client knows no server code; server/common knows no master or worker; the worker never imports the
 * master (they share only protos) and the master never imports the worker; the Hadoop adapter
 * (core/client/hdfs) uses the client API only (no protos, no gRPC); the CLI has no compile-time Hadoop. A
 * wrong import fails here.
 */
class LayeringTest {
  private static final Path ROOT = findRoot();

  private static Path findRoot() {
    Path p = Path.of("").toAbsolutePath();
    while (p != null && !Files.exists(p.resolve("core/common/pom.xml"))) {
      p = p.getParent();
    }
    if (p == null) {
      throw new IllegalStateException("cannot find the project root above " + Path.of("").toAbsolutePath());
    }
    return p;
  }

  /** Source lines of module {@code dir} (main sources) that mention a forbidden package. */
  static List<String> violations(String dir, String... forbiddenPackages) throws IOException {
    Path src = ROOT.resolve(dir).resolve("src/main/java");
    assertThat(src).as("sources of " + dir).isDirectory();
    StringBuilder alt = new StringBuilder();
    for (String f : forbiddenPackages) {
      alt.append(alt.length() == 0 ? "" : "|").append(Pattern.quote(f));
    }
    Pattern bad = Pattern.compile("\\b(" + alt + ")\\.");
    List<String> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(src)) {
      for (Path f : (Iterable<Path>) files.filter(x -> x.toString().endsWith(".java"))::iterator) {
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
          if (bad.matcher(lines.get(i)).find()) {
            out.add(ROOT.relativize(f) + ":" + (i + 1) + ": " + lines.get(i).trim());
          }
        }
      }
    }
    return out;
  }

  @Test
  void common_knowsNoClientOrServer() throws IOException {
    assertThat(violations("core/common", "io.strata.client", "io.strata.cli", "io.strata.server",
        "io.strata.master", "io.strata.worker")).isEmpty();
  }

  @Test
  void client_knowsNoServer() throws IOException {
    assertThat(violations("core/client/fs", "io.strata.server", "io.strata.master", "io.strata.worker",
        "io.strata.cli")).isEmpty();
    assertThat(violations("core/client/cli", "io.strata.server", "io.strata.master", "io.strata.worker"))
        .isEmpty();
  }

  @Test
  void hadoopAdapter_usesTheClientOnly() throws IOException {
    assertThat(violations("core/client/hdfs", "io.strata.server", "io.strata.master", "io.strata.worker",
        "io.strata.cli", "io.strata.proto", "io.grpc")).isEmpty();
  }

  /**
   * The CLI reaches Hadoop only by reflection (bench io's hadoop path, HadoopIoClient), so {@code strata fs}
   * runs without Hadoop: no Hadoop or adapter dependency in its pom, no import of either in its sources.
   */
  @Test
  void cli_hasNoCompileTimeHadoop() throws IOException {
    assertThat(Files.readString(ROOT.resolve("core/client/cli/pom.xml"))).doesNotContain("hadoop");
    List<String> imports = new ArrayList<>();
    try (Stream<Path> files = Files.walk(ROOT.resolve("core/client/cli/src/main/java"))) {
      for (Path f : (Iterable<Path>) files.filter(x -> x.toString().endsWith(".java"))::iterator) {
        for (String line : Files.readAllLines(f)) {
          if (line.startsWith("import org.apache.hadoop.") || line.startsWith("import io.strata.hadoop.")) {
            imports.add(ROOT.relativize(f) + ": " + line);
          }
        }
      }
    }
    assertThat(imports).isEmpty();
  }

  @Test
  void serverCommon_knowsNoMasterWorkerOrClient() throws IOException {
    assertThat(violations("core/server/common", "io.strata.master", "io.strata.worker", "io.strata.client"))
        .isEmpty();
  }

  @Test
  void workerAndMaster_neverImportEachOther() throws IOException {
    assertThat(violations("core/server/worker", "io.strata.master", "io.strata.client")).isEmpty();
    assertThat(violations("core/server/master", "io.strata.worker", "io.strata.client")).isEmpty();
  }

  @Test
  void theCheckItself_findsAForbiddenImport() throws IOException {
    // The master's own sources mention io.strata.master: the scanner must see that.
    assertThat(violations("core/server/master", "io.strata.master")).isNotEmpty();
  }
}

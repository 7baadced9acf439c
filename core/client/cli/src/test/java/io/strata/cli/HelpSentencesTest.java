package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.strata.common.conf.StrataConf;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** Every command's and option's --help summary is a whole sentence: a capital first, a full stop last. */
class HelpSentencesTest {
  @Test
  void everySummaryIsAWholeSentence() {
    CliContext ctx = new CliContext(StrataConf.defaults(), System.in, new PrintStream(new ByteArrayOutputStream()),
        new PrintStream(new ByteArrayOutputStream()), Clock.systemUTC(), ZoneOffset.UTC, false, c -> null);
    List<String> bad = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    walk(StrataCli.commandLine(ctx), "strata", bad, seen);
    assertThat(seen).hasSizeGreaterThan(100);
    assertThat(bad).isEmpty();
  }

  private static void walk(CommandLine cl, String path, List<String> bad, List<String> seen) {
    check(path, String.join(" ", cl.getCommandSpec().usageMessage().description()), bad, seen);
    for (OptionSpec o : cl.getCommandSpec().options()) {
      check(path + " " + o.longestName(), String.join(" ", o.description()), bad, seen);
    }
    cl.getSubcommands().forEach((name, sub) -> {
      if (!name.equals("help")) {
        walk(sub, path + " " + name, bad, seen);
      }
    });
  }

  private static void check(String where, String text, List<String> bad, List<String> seen) {
    seen.add(where);
    String t = text.strip();
    if (t.isEmpty() || !Character.isUpperCase(t.codePointAt(0)) && !t.startsWith("-") || !t.endsWith(".")) {
      bad.add(where + ": '" + t + "'");
    }
  }
}

package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ModeChangeTest {
  private static int apply(String mode, int current, boolean directory) {
    return ModeChange.parse(mode).apply(current, directory);
  }

  @Test
  void octal_setsTheModeOutright() {
    assertThat(apply("755", 0644, false)).isEqualTo(0755);
    assertThat(apply("1777", 0, true)).isEqualTo(01777);
    assertThat(apply("0", 0777, false)).isEqualTo(0);
    assertThat(ModeChange.parse("640").isAbsolute()).isTrue();
    assertThat(ModeChange.parse("u+x").isAbsolute()).isFalse();
  }

  @Test
  void symbolic_changesTheNamedClassesOnly() {
    assertThat(apply("u+x", 0644, false)).isEqualTo(0744);
    assertThat(apply("go-w", 0666, false)).isEqualTo(0644);
    assertThat(apply("u+x,go-w", 0666, false)).isEqualTo(0744);
    assertThat(apply("a=r", 0777, false)).isEqualTo(0444);
    assertThat(apply("=rw", 0111, false)).isEqualTo(0666); // no class letter means a
    assertThat(apply("+x", 0644, false)).isEqualTo(0755);
    assertThat(apply("o=", 0777, false)).isEqualTo(0770);
    assertThat(apply("ug=rwx,o=rx", 0, false)).isEqualTo(0775);
  }

  @Test
  void capitalX_isExecuteForDirectoriesAndAlreadyExecutableFiles_only() {
    assertThat(apply("a+X", 0644, true)).isEqualTo(0755);
    assertThat(apply("a+X", 0644, false)).isEqualTo(0644);
    assertThat(apply("a+X", 0744, false)).isEqualTo(0755);
  }

  @Test
  void t_isTheStickyBit() {
    assertThat(apply("+t", 0777, true)).isEqualTo(01777);
    assertThat(apply("o-t", 01777, true)).isEqualTo(0777);
    assertThat(apply("u+t", 0777, true)).isEqualTo(0777); // the sticky bit is not the owner's
  }

  @Test
  void malformedModes_areRefusedWithTheFormsUnderstood() {
    for (String bad : new String[] {"8", "12345", "u+q", "x", "u+", "", "u+x,,g-w"}) {
      assertThatThrownBy(() -> ModeChange.parse(bad)).as(bad)
          .hasMessage("'" + bad + "' is not a mode: give octal digits (755, 1777) or comma-separated clauses "
              + "[ugoa][+-=][rwxXt] (u+x,go-w)");
    }
  }
}

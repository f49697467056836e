"""Place names a Chinese claim may name: countries and regions, China's provinces and its larger cities, each under
its Simplified name with its Traditional forms. Chinese has no capital letters to tell a name (English claims' names
are their capitalised words), so the analysis (native/src/clause.rs) finds these in a clause's text and holds each
as a name: a claim that names a place its context does not ("我们也配送到日本") is flagged as an English one naming
"Japan" is. Places whose names are also common words are left out (开封 "opened", 大同, 中山, 三明).
"""

from __future__ import annotations

# A place and its other written forms, separated by "|": the first is the name a clause holds.
_PLACES = """
中国 美国|美國 英国|英國 法国|法國 德国|德國 日本 韩国|韓國 朝鲜|朝鮮 俄罗斯|俄羅斯 加拿大 墨西哥 巴西 阿根廷
澳大利亚|澳大利亞 澳洲 新西兰|新西蘭|紐西蘭 印度 印尼 泰国|泰國 越南 新加坡 马来西亚|馬來西亞 菲律宾|菲律賓
意大利|義大利 西班牙 葡萄牙 荷兰|荷蘭 比利时|比利時 瑞士 瑞典 挪威 丹麦|丹麥 芬兰|芬蘭 波兰|波蘭 奥地利|奧地利
希腊|希臘 土耳其 埃及 南非 以色列 伊朗 伊拉克 沙特 阿联酋|阿聯酋 巴基斯坦 蒙古 爱尔兰|愛爾蘭 乌克兰|烏克蘭
欧洲|歐洲 亚洲|亞洲 非洲 美洲 欧盟|歐盟
香港 澳门|澳門 台湾|台灣|臺灣
北京 天津 上海 重庆|重慶 河北 山西 辽宁|遼寧 吉林 黑龙江|黑龍江 江苏|江蘇 浙江 安徽 福建 江西 山东|山東 河南 湖北
湖南 广东|廣東 海南 四川 贵州|貴州 云南|雲南 陕西|陝西 甘肃|甘肅 青海 内蒙古|內蒙古 广西|廣西 西藏 宁夏|寧夏 新疆
广州|廣州 深圳 杭州 南京 苏州|蘇州 成都 武汉|武漢 西安 长沙|長沙 郑州|鄭州 济南|濟南 青岛|青島 大连|大連 沈阳|瀋陽
哈尔滨|哈爾濱 长春|長春 石家庄|石家莊 太原 合肥 福州 厦门|廈門 南昌 昆明 贵阳|貴陽 南宁|南寧 兰州|蘭州
乌鲁木齐|烏魯木齊 拉萨|拉薩 呼和浩特 银川|銀川 西宁|西寧 海口 三亚|三亞 宁波|寧波 无锡|無錫 东莞|東莞 佛山 珠海
温州|溫州 台北|臺北 高雄 台中|臺中
"""

# Short forms that name several places at once.
_GROUPS = {"港澳台": ("香港", "澳门", "台湾"), "港澳": ("香港", "澳门")}


def _forms() -> dict[str, list[str]]:
    forms: dict[str, list[str]] = {}
    for entry in _PLACES.split():
        name, *others = entry.split("|")
        for form in (name, *others):
            forms[form] = [name]
    for form, names in _GROUPS.items():
        forms[form] = list(names)
    return forms


# Each written form and the names it stands for (native/src/clause/scan.rs, places).
CJK_PLACES = _forms()
